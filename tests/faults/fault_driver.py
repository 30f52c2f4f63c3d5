#!/usr/bin/python3
"""warmpool fault suite: real Python Celery sends tasks through three workers (one with -c 4)
while seeded faults hit them: SIGKILLs and SIGTERMs at random moments, restarts under the same
or a new hostname, and two Redis restarts (AOF on). warmpool-scaler is polled over gRPC all
along. At the end every task must have exactly one SUCCESS result, duplicates must be explained
by SIGKILLs, nothing may be left in Redis, and the scaler must have told the truth.

Exit: 0 pass, 1 a property failed, 2 the harness itself failed, 77 a needed tool is missing.
`--workers python` runs Celery's own worker on the same faults: it reports, never fails on
delivery (its figures are the comparison), but the scaler is still judged.
See tests/faults/README.md.
"""
import argparse
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SKIP = 77


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", choices=["warmpool", "python"], default="warmpool")
    p.add_argument("--worker-bin", help="warmpool-faults-worker (--workers warmpool)")
    p.add_argument("--scaler-bin", required=True)
    p.add_argument("--protoc", default="protoc")
    p.add_argument("--proto", required=True, help="proto/externalscaler.proto")
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--tasks", type=int, default=600)
    p.add_argument("--send-seconds", type=float, default=40.0)
    p.add_argument("--chaos-seconds", type=float, default=50.0)
    p.add_argument("--visibility-timeout", type=float, default=10.0)
    p.add_argument("--grace-seconds", type=float, default=15.0)
    p.add_argument("--drain-seconds", type=float, default=60.0,
                   help="how long to wait for the last tasks once the faults stop")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    return p.parse_args()


def missing_tools(cfg):
    missing = []
    for module in ("celery", "grpc", "google.protobuf", "redis"):
        try:
            __import__(module)
        except ImportError:
            missing.append("python3 module " + module)
    for tool in ("redis-server", cfg.protoc):
        if shutil.which(tool) is None:
            missing.append(tool)
    return missing


class Log:
    """One JSON line per event on stdout, times relative to the start."""

    def __init__(self):
        self.t0 = time.monotonic()
        self.lock = threading.Lock()

    def __call__(self, event, **fields):
        line = {"at": round(time.monotonic() - self.t0, 3), "event": event}
        line.update(fields)
        with self.lock:
            print(json.dumps(line, default=str), flush=True)


def make_plan(cfg):
    """(task id, seconds, priority) per task, and the send times: seeded."""
    rng = random.Random(cfg.seed * 7919 + 1)
    plan = [(str(uuid.UUID(int=rng.getrandbits(128), version=4)),
             round(rng.uniform(0.05, 0.6), 3),
             rng.choice([None, None, None, 0, 3, 5, 6, 9]))
            for _ in range(cfg.tasks)]
    send_at = sorted(rng.uniform(0, cfg.send_seconds) for _ in range(cfg.tasks))
    return plan, send_at


def send_all(app, plan, send_at, redis_lock, log, stats):
    from worker_pool import QUEUE
    t0 = time.monotonic()
    for (task_id, seconds, priority), at in zip(plan, send_at):
        delay = t0 + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        with redis_lock:  # never during a Redis restart: a send is then never ambiguous
            app.send_task("faults.work", args=[seconds], queue=QUEUE, priority=priority,
                          task_id=task_id)
        stats["sent"] += 1
    log("all_sent", tasks=stats["sent"], seconds=round(time.monotonic() - t0, 3))


def wait_drained(r, plan, queue, timeout):
    """Until every task has a SUCCESS result and the queue and `unacked` are empty."""
    from verdict import QUEUE_LISTS_SUFFIX
    keys = ["celery-task-meta-" + t for t, _, _ in plan]
    lists = [queue] + [queue + QUEUE_LISTS_SUFFIX + str(n) for n in range(1, 10)]
    deadline = time.monotonic() + timeout
    done = 0
    while time.monotonic() < deadline:
        try:
            done = 0
            for i in range(0, len(keys), 500):
                for v in r.mget(keys[i:i + 500]):
                    if v is not None and json.loads(v).get("status") == "SUCCESS":
                        done += 1
            backlog = sum(r.llen(k) for k in lists) + r.hlen("unacked")
            if done == len(keys) and backlog == 0:
                return True, done
        except Exception:  # Redis briefly unavailable: keep waiting
            pass
        time.sleep(0.25)
    return False, done


def main():
    cfg = parse_args()
    missing = missing_tools(cfg)
    if cfg.workers == "warmpool" and not (cfg.worker_bin and os.access(cfg.worker_bin, os.X_OK)):
        missing.append("--worker-bin")
    if missing:
        print("SKIP: missing " + ", ".join(missing))
        return SKIP

    import redis_ctl
    from chaos import Chaos
    from scaler_poller import ScalerPoller, load_proto
    import verdict
    from worker_pool import QUEUE, WorkerSlot

    cfg.workdir = tempfile.mkdtemp(prefix="warmpool-faults-")
    cfg.data_dir = os.path.join(cfg.workdir, "data")
    os.makedirs(cfg.data_dir)
    cfg.exec_log = os.path.join(cfg.data_dir, "executions.log")
    log = Log()
    log("start", workers=cfg.workers, seed=cfg.seed, tasks=cfg.tasks, workdir=cfg.workdir,
        visibility_timeout=cfg.visibility_timeout)

    server = redis_ctl.RedisServer(cfg.workdir, redis_ctl.free_port())
    cfg.broker = server.url
    os.environ["FAULTS_BROKER"] = cfg.broker
    os.environ["FAULTS_VISIBILITY"] = str(cfg.visibility_timeout)
    scaler = None
    slots = []
    poller = None
    code = 2
    try:
        server.start()
        scaler_port = redis_ctl.free_port()
        scaler_log = open(os.path.join(cfg.workdir, "scaler.log"), "wb")
        # --coalesce-ms 0: each GetMetrics reads Redis itself, so its answer can be bracketed.
        scaler = subprocess.Popen(
            [cfg.scaler_bin, "--listen", "127.0.0.1:%d" % scaler_port,
             "--redis", "default=" + cfg.broker, "--metrics-listen", "off",
             "--coalesce-ms", "0", "--redis-timeout-ms", "500", "--log-format", "json"],
            stdout=scaler_log, stderr=subprocess.STDOUT)
        pb2 = load_proto(cfg.protoc, cfg.proto, cfg.workdir)
        poller = ScalerPoller("127.0.0.1:%d" % scaler_port, pb2, server.port)
        if not poller.wait_ok():
            log("harness_error", error="scaler never answered")
            return 2
        t_first_ok = poller.samples[-1].t1

        slots = [WorkerSlot(1, 4, cfg), WorkerSlot(2, 1, cfg), WorkerSlot(3, 2, cfg)]
        for s in slots:
            s.start(new_hostname=True)
        import fault_tasks  # after FAULTS_BROKER is set
        app = fault_tasks.app
        plan, send_at = make_plan(cfg)
        redis_lock = threading.Lock()
        stats = {"sent": 0}
        chaos = Chaos(cfg, slots, server, redis_lock, log)
        poller.start()
        sender = threading.Thread(target=send_all,
                                  args=(app, plan, send_at, redis_lock, log, stats), daemon=True)
        t_run = time.monotonic()
        sender.start()
        chaos.start()
        sender.join()
        chaos.join()
        log("faults_over", seconds=round(time.monotonic() - t_run, 3))
        r = redis_ctl.client(server.port, timeout=5)
        drained, done = wait_drained(r, plan, QUEUE, cfg.drain_seconds)
        log("drained" if drained else "not_drained", successes=done,
            seconds=round(time.monotonic() - t_run, 3))
        time.sleep(0.5)  # a last scaler sample or two with everything idle
        poller.stop()
        if chaos.error:
            log("harness_error", error=chaos.error)
            return 2

        results, result_problems = verdict.check_results(app, plan, timeout=5 if drained else 1)
        runs = verdict.read_executions(cfg.exec_log)
        exec_fig, duplicates, exec_problems = verdict.check_executions(plan, runs, chaos.kills,
                                                                   strict=cfg.workers == "warmpool")
        seen, leftover_problems = verdict.check_leftovers(r, QUEUE)
        scaler_fig, scaler_problems = verdict.check_scaler(poller.samples, chaos.outages,
                                                           t_first_ok)
        # A warm shutdown exits 0. Dying of SIGTERM is allowed only before worker_ready: the
        # signal came before main() blocked it, so before the worker could take a message.
        term_problems = [] if cfg.workers == "python" else [
            "SIGTERM of %s: exit %s after %.3f s%s" % (t["hostname"], t["exit_code"], t["exit_s"],
                                                     "" if t["clean"] else " (SIGKILLed)")
            for t in chaos.terms if not t["clean"] or not (
                t["exit_code"] == 0 or (t["exit_code"] == -signal.SIGTERM and not t["was_ready"]))]
        crash_problems = ["worker %s exited unasked (code %s), log %s"
                          % (c["hostname"], c["exit_code"], c["log"]) for c in chaos.crashes]
        delivery_problems = (result_problems + exec_problems + leftover_problems +
                             term_problems + crash_problems)
        if not drained:
            delivery_problems.insert(0, "not drained within %.0f s: %d/%d SUCCESS"
                                     % (cfg.drain_seconds, done, len(plan)))

        for d in duplicates:
            log("duplicate", **d)
        summary = {
            "workers": cfg.workers, "seed": cfg.seed, "tasks": len(plan), "sent": stats["sent"],
            "results": results,
            "sigkill": len(chaos.kills), "sigterm": len(chaos.terms),
            "sigterm_exit_codes": dict(collections.Counter(t["exit_code"] for t in chaos.terms)),
            "sigkill_in_flight": sum(len(k["in_flight"]) for k in chaos.kills),
            "redis_restarts": len(chaos.outages), **exec_fig,
            "leftover_keys": seen, "scaler": scaler_fig,
            "delivery_problems": len(delivery_problems),
            "scaler_problems": len(scaler_problems),
            "seconds": round(time.monotonic() - log.t0, 1),
        }
        for p in delivery_problems[:50] + scaler_problems[:50]:
            print("PROBLEM: " + p, flush=True)
        print("SUMMARY " + json.dumps(summary, indent=1, default=str), flush=True)
        failed = scaler_problems or (delivery_problems and cfg.workers == "warmpool")
        code = 1 if failed else 0
        print("RESULT: %s (%s workers)" % ("FAIL" if failed else "PASS", cfg.workers))
        return code
    finally:
        if poller is not None and poller.is_alive():
            poller.stop()
        for s in slots:
            if s.up:
                s.kill()
        if scaler is not None:
            scaler.kill()
            scaler.wait()
        server.kill()
        if code == 0 and not cfg.keep:
            shutil.rmtree(cfg.workdir, ignore_errors=True)
        else:
            print("work directory kept: " + cfg.workdir, flush=True)


if __name__ == "__main__":
    exit_code = main()
    sys.stdout.flush()
    # Not sys.exit: Celery's AsyncResult finalizers would talk to the Redis we just stopped.
    os._exit(exit_code)
