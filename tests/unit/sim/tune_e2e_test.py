#!/usr/bin/python3
"""End to end: a Python Celery client feeds a real Redis queue that a real Celery worker drains,
`warmpool-sim record` samples it, `warmpool-sim tune` replays the recording and writes a
ScaledObject patch, and `kubectl kustomize` renders manifests/base with it.

Usage: tune_e2e_test.py <warmpool-sim> <repo-root>
Exit: 0 passed, 1 failed, 77 skipped (redis-server, Celery or kubectl/kustomize missing; the
kustomize step is the last one, so everything before it has been checked when it skips).
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

PY = "/usr/bin/python3"
# (seconds into the recording, tasks, seconds each): one solo worker drains each burst before
# the next and well before the 28 s recording ends (slack for a loaded machine), so every
# duration is measured from `unacked`.
BURSTS = ((1, 6, 1.5), (8, 4, 1.0), (12, 3, 2.0))
SKIP = 77

TASKS = textwrap.dedent("""
    import time
    from celery import Celery
    app = Celery("tune_e2e")
    app.conf.task_acks_late = True          # stays in kombu's `unacked` hash while it runs
    app.conf.worker_prefetch_multiplier = 1
    @app.task(name="tune_e2e.work")
    def work(seconds):
        time.sleep(seconds)
""")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def wait_redis(port, proc):
    deadline = time.time() + 10
    while time.time() < deadline:
        if proc.poll() is not None:
            fail("redis-server exited")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            time.sleep(0.1)
    fail("redis-server did not answer")


def send(broker, count, seconds):
    code = ("import sys; sys.path.insert(0, %r); from tasks import app; "
            "app.conf.broker_url = %r; "
            "[app.send_task('tune_e2e.work', args=[%r], queue='q') for _ in range(%d)]"
            % (os.getcwd(), broker, seconds, count))
    subprocess.run([PY, "-c", code], check=True, timeout=30)


def kustomize_cmd():
    """kubectl kustomize, else kustomize build; $KUBECTL / $KUSTOMIZE override the lookup."""
    kubectl = os.environ.get("KUBECTL", shutil.which("kubectl"))
    if kubectl and os.access(kubectl, os.X_OK) and subprocess.run([kubectl, "version", "--client"], capture_output=True,
                                  timeout=30).returncode == 0:
        return [kubectl, "kustomize"]
    kustomize = os.environ.get("KUSTOMIZE", shutil.which("kustomize"))
    return [kustomize, "build"] if kustomize and os.access(kustomize, os.X_OK) else None


# The op tune writes for a scale-down window other than the shipped one (sim/tune.h), rendered
# too when the recommendation keeps the shipped window.
WINDOW_OP = ("- op: add\n  path: /spec/advanced/horizontalPodAutoscalerConfig/behavior/scaleDown/"
             "stabilizationWindowSeconds\n  value: 60\n"
             "- op: add\n  path: /spec/triggers/0/metadata/scaleDownWindowSeconds\n"
             "  value: \"60\"\n")


def check_render(work, repo, patch_ops, overlay_name="overlay", extra=""):
    cmd = kustomize_cmd()
    if cmd is None:
        print("SKIP: neither kubectl nor kustomize: the patch was not rendered")
        return SKIP
    import yaml
    overlay = os.path.join(work, overlay_name)
    os.makedirs(overlay)
    if not os.path.exists(os.path.join(work, "base")):
        shutil.copytree(os.path.join(repo, "manifests", "base"), os.path.join(work, "base"))
    with open(os.path.join(overlay, "tune-patch.yaml"), "w") as f:
        f.write(open(os.path.join(work, "patch.yaml")).read() + extra)
    patch_ops = patch_ops + (yaml.safe_load(extra) if extra else [])
    with open(os.path.join(overlay, "kustomization.yaml"), "w") as f:
        f.write("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                "resources:\n  - ../base\n")
        f.write(open(os.path.join(work, "entry.yaml")).read())
    r = subprocess.run(cmd + [overlay], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail("%s refused the patch:\n%s" % (" ".join(cmd), r.stderr))
    so = [d for d in yaml.safe_load_all(r.stdout) if d and d.get("kind") == "ScaledObject"]
    if len(so) != 1 or so[0]["apiVersion"] != "keda.sh/v1alpha1":
        fail("want one keda.sh/v1alpha1 ScaledObject, got %r" % so)
    trig = so[0]["spec"]["triggers"][0]
    if trig["type"] != "external-push" or "scalerAddress" not in trig["metadata"]:
        fail("the patch lost the trigger's own fields: %r" % trig)
    window = so[0]["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]
    for op in patch_ops:
        key = op["path"].rsplit("/", 1)[1]
        if key == "stabilizationWindowSeconds":  # the HPA's field, an integer
            if window.get(key) != op["value"] or not isinstance(op["value"], int):
                fail("rendered scale-down window %r, want the integer %r"
                     % (window.get(key), op["value"]))
            continue
        got = trig["metadata"].get(key)
        if got != op["value"] or not isinstance(got, str):
            fail("rendered %s = %r, want the string %r" % (key, got, op["value"]))
    print("rendered ScaledObject carries", {o["path"].rsplit("/", 1)[1]: o["value"]
                                            for o in patch_ops})
    return 0


def main():
    sim, repo = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    redis = shutil.which("redis-server")
    if not redis:
        print("SKIP: redis-server not installed")
        return SKIP
    if not os.access(PY, os.X_OK) or subprocess.run(
            [PY, "-c", "import celery, yaml"], capture_output=True).returncode != 0:
        print("SKIP: /usr/bin/python3 with celery and yaml (python3-celery, python3-yaml) missing")
        return SKIP
    work = tempfile.mkdtemp(prefix="tune-e2e-")
    procs = []
    try:
        os.chdir(work)
        with open("tasks.py", "w") as f:
            f.write(TASKS)
        port = free_port()
        broker = "redis://127.0.0.1:%d/0" % port
        rs = subprocess.Popen([redis, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL)
        procs.append(rs)
        wait_redis(port, rs)
        worker = subprocess.Popen(
            [PY, "-m", "celery", "-A", "tasks", "-b", broker, "worker", "-Q", "q", "--pool",
             "solo", "--without-gossip", "--without-mingle", "--without-heartbeat",
             "-l", "warning"], stdout=open("worker.log", "w"), stderr=subprocess.STDOUT)
        procs.append(worker)
        time.sleep(3)  # worker up and consuming before the recording starts
        rec = subprocess.Popen([sim, "record", "--redis", broker, "--queues", "q",
                                "--interval-ms", "200", "--duration-s", "28", "--out", "rec.csv"])
        procs.append(rec)
        start = time.time()
        for at, count, seconds in BURSTS:  # three bursts
            time.sleep(max(0.0, start + at - time.time()))
            send(broker, count, seconds)
        if rec.wait(timeout=60) != 0:
            fail("warmpool-sim record failed")
        rows = [l.split(",") for l in open("rec.csv")
                if l.strip() and not l.startswith(("#", "arrival"))]
        # The recorder infers arrivals from 200 ms samples (sim/recorder.h); a take that falls
        # between two samples can add one arrival, so allow one more task than were sent.
        want_n = sum(b[1] for b in BURSTS)
        if not want_n <= len(rows) <= want_n + 1:
            fail("recorded %d tasks, want %d:\n%s\nworker log:\n%s"
                 % (len(rows), want_n, open("rec.csv").read(), open("worker.log").read()))
        durations = [float(r[1]) for r in rows]  # measured from the in-flight tags
        sent_mean = sum(c * d for _, c, d in BURSTS) / want_n
        mean = sum(durations) / len(durations)
        if abs(mean - sent_mean) > 0.4 or not all(0.6 <= d <= 2.8 for d in durations):
            fail("tasks of 1-2 s (mean %.2f) recorded as %r" % (sent_mean, durations))
        r = subprocess.run([sim, "tune", "--workload", "rec.csv", "--seeds", "2", "--out-patch",
                            "patch.yaml"], capture_output=True, text=True, timeout=600)
        print(r.stdout)
        if r.returncode != 0:
            fail("tune failed: " + r.stderr)
        out = r.stdout
        for want in ("Pareto front of warmpool's candidates", "recommended:",
                     "KEDA at the same SLO:", "cost at equal SLO:", "- op: add"):
            if want not in out:
                fail("tune output lacks %r" % want)
        if "simulated" not in r.stderr:
            fail("no progress on stderr")
        front = out.split("candidate\n", 1)[1].split("\n\n", 1)[0].splitlines()
        if not front or "<- recommended" not in "".join(front):
            fail("the front is empty or does not hold the recommendation:\n%s" % front)
        entry = out.split("kustomization.yaml entry:\n", 1)[1]
        with open("entry.yaml", "w") as f:
            f.write(entry.replace("- path: patch.yaml", "- path: tune-patch.yaml"))
        import yaml
        ops = yaml.safe_load(open("patch.yaml"))
        keys = {o["path"].rsplit("/", 1)[1] for o in ops}
        if keys - {"taskSeconds", "stabilizationWindowSeconds", "scaleDownWindowSeconds"} != {
                "targetWaitSeconds", "prewarm", "forecast", "keepAlive"}:
            fail("patch keys %r" % keys)
        rec_line = [l for l in out.splitlines() if l.startswith("recommended:")][0]
        for o in ops:
            key, val = o["path"].rsplit("/", 1)[1], o["value"]
            want = {"targetWaitSeconds": "T%s" % val,
                    "stabilizationWindowSeconds": "scaleDownWindow=%s" % val,
                    "scaleDownWindowSeconds": "scaleDownWindow=%s" % val}.get(
                        key, "%s=%s" % (key, val))
            if want not in rec_line:
                fail("patch %s=%s is not the recommendation: %s" % (key, val, rec_line))
        # A loose SLO: the recommendation is the cheapest candidate within it (JSON report).
        import json
        r = subprocess.run([sim, "tune", "--workload", "rec.csv", "--seeds", "2", "--slo",
                            "p95=1200", "--format", "json"], capture_output=True, text=True,
                           timeout=600)
        if r.returncode != 0:
            fail("tune --slo failed: " + r.stderr)
        j = json.loads(r.stdout)
        rec_p, cands = j["recommended"], [c for c in j["candidates"] if c["killedOrRequeued"] == 0]
        cheapest = min(c["gpuHours"] for c in cands if c["p95WaitSeconds"] <= 1200)
        if not j["sloGiven"] or rec_p["p95WaitSeconds"] > 1200 or rec_p["gpuHours"] != cheapest:
            fail("--slo p95=1200 recommended %r, cheapest within it costs %r" % (rec_p, cheapest))
        if rec_p["gpuHours"] > j["default"]["gpuHours"]:
            fail("a looser SLO recommends something dearer than the default")
        print("--slo p95=1200: recommended", rec_p["name"], rec_p["gpuHours"], "GPU-h")
        rendered = check_render(work, repo, ops)
        if rendered != 0 or any(o["path"].endswith("stabilizationWindowSeconds") for o in ops):
            return rendered
        return check_render(work, repo, ops, "overlay-window", WINDOW_OP)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        if not os.environ.get("TUNE_E2E_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept", work)


if __name__ == "__main__":
    sys.exit(main())
