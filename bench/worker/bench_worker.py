#!/usr/bin/python3
"""warmpool.ping tasks/s: warmpool-worker vs a Python Celery 5.2.6 worker (-P solo), same
redis-server, same result backend, in one run; plus the Redis-only ceiling (redis-benchmark
LPUSH/RPOP). Prints a Markdown table; ratios are against the Python worker of the same run.

Usage: /usr/bin/python3 bench/worker/bench_worker.py --worker build/worker/warmpool-worker
         [--n-ours 20000] [--n-python 3000] [--ours-prefetch 4 64] [--python-same-settings 1 4 64]

Method: the queue is pre-filled with N Celery 5.2.6 protocol-2 messages (a message made by
send_task, copied with fresh task ids and delivery tags), then the worker is started; the rate
is (N - 1) / (time of the last result - time of the first result), read by polling DBSIZE of the
result-backend DB, so start-up time is not counted. Each worker runs alone. Python runs at
Celery's defaults (the headline baseline) and, for a like-for-like ratio, with the settings
warmpool-worker runs with (acks_late and the same prefetch multiplier).
"""
import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import redis
from celery import Celery

HERE = os.path.dirname(os.path.abspath(__file__))
PYTASKS_DIR = os.path.join(HERE, "..", "..", "tests", "integration", "python")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_redis(port, workdir):
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", workdir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = redis.Redis(port=port)
    for _ in range(200):
        try:
            r.ping()
            return proc
        except redis.ConnectionError:
            time.sleep(0.02)
    raise RuntimeError("redis-server did not start")


def redis_ceiling(port, n):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "lpush,rpop", "-n", str(n),
                          "-c", "1", "-q"], capture_output=True, text=True, check=True).stdout
    rates = {}
    for line in out.replace("\r", "\n").splitlines():
        m = re.match(r"\s*(LPUSH|RPOP)[^:]*:\s*([\d.]+) requests per second", line)
        if m:
            rates[m.group(1)] = float(m.group(2))
    return rates


def template_message(broker, backend, queue):
    app = Celery(broker=broker, backend=backend)
    r = redis.Redis.from_url(broker)
    app.send_task("warmpool.ping", queue=queue)
    raw = r.rpop(queue).decode()
    return raw


def prefill(broker, queue, template, n):
    env = json.loads(template)
    old_id = env["headers"]["id"]
    old_tag = env["properties"]["delivery_tag"]
    r = redis.Redis.from_url(broker)
    # A Python worker with acks_late that is stopped right after its last result may restore
    # that (finished) message on shutdown: start every run from an empty queue.
    r.delete(queue, "unacked", "unacked_index")
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        new_id = str(uuid.uuid4())
        msg = template.replace(old_id, new_id).replace(old_tag, str(uuid.uuid4()))
        pipe.lpush(queue, msg)
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()
    assert r.llen(queue) == n


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(backend, n, proc, timeout, redis_pid):
    r = redis.Redis.from_url(backend)
    first = last = None
    cpu0 = None
    deadline = time.time() + timeout
    while time.time() < deadline:
        done = r.dbsize()
        now = time.time()
        if first is None and done >= 1:
            first = (now, done)
            cpu0 = (cpu_seconds(proc.pid), cpu_seconds(redis_pid))
        if done >= n:
            last = (now, done)
            break
        if proc.poll() is not None:
            raise RuntimeError("worker exited early with %s" % proc.returncode)
        time.sleep(0.005)
    if last is None:
        raise RuntimeError("only %d of %d results within %ss" % (r.dbsize(), n, timeout))
    cpu1 = (cpu_seconds(proc.pid), cpu_seconds(redis_pid))
    tasks = last[1] - first[1]
    return {"rate": tasks / max(last[0] - first[0], 1e-9),
            "worker_cpu_us": (cpu1[0] - cpu0[0]) / tasks * 1e6,
            "redis_cpu_us": (cpu1[1] - cpu0[1]) / tasks * 1e6}


def run_worker(name, argv, env, broker, backend, n, template, queue, redis_pid, timeout=300):
    redis.Redis.from_url(backend).flushdb()
    prefill(broker, queue, template, n)
    log = tempfile.NamedTemporaryFile(prefix="bench-%s-" % name, suffix=".log", delete=False)
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        rate = measure(backend, n, proc, timeout, redis_pid)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    statuses = set()
    r = redis.Redis.from_url(backend)
    for i, key in enumerate(r.scan_iter(count=1000)):
        statuses.add(json.loads(r.get(key))["status"])
        if i >= 200:
            break
    return rate, statuses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--worker", required=True, help="path of warmpool-worker")
    p.add_argument("--n-ours", type=int, default=20000)
    p.add_argument("--n-python", type=int, default=3000)
    p.add_argument("--redis-benchmark-n", type=int, default=100000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--ours-prefetch", type=int, nargs="*", default=[4, 64],
                   help="extra warmpool-worker runs with these --prefetch values")
    p.add_argument("--python-same-settings", type=int, nargs="*", default=[1, 4, 64],
                   help="extra Python runs with acks_late and these prefetch multipliers: the "
                        "settings warmpool-worker runs with, for a like-for-like ratio")
    a = p.parse_args()

    workdir = tempfile.mkdtemp(prefix="bench-worker-")
    port = free_port()
    server = start_redis(port, workdir)
    broker = "redis://127.0.0.1:%d/0" % port
    backend = "redis://127.0.0.1:%d/1" % port
    queue = "bench"
    try:
        ceiling = redis_ceiling(port, a.redis_benchmark_n)
        redis.Redis(port=port).flushall()
        template = template_message(broker, backend, queue)
        env = dict(os.environ, CELERY_BROKER_URL=broker, CELERY_RESULT_BACKEND=backend,
                   PYTHONPATH=PYTASKS_DIR)
        py_argv = ["/usr/bin/python3", "-m", "celery", "-A", "worker_pytasks", "worker", "-P",
                   "solo", "-Q", queue, "--without-gossip", "--without-mingle",
                   "--without-heartbeat", "--loglevel", "WARNING"]
        py_env = lambda acks_late, prefetch: dict(env, WORKER_PYTASKS_ACKS_LATE=acks_late,
                                                  WORKER_PYTASKS_PREFETCH=str(prefetch))
        # (label, argv, env, tasks, settings key for the like-for-like column)
        configs = [("Python Celery 5.2.6 worker, -P solo, prefetch x4, early ack (Celery "
                    "defaults)", py_argv, py_env("0", 4), a.n_python, None)]
        for pf in a.python_same_settings:
            configs.append(("Python Celery 5.2.6 worker, -P solo, prefetch x%d, acks_late" % pf,
                            py_argv, py_env("1", pf), a.n_python, ("python", pf)))
        ours = [a.worker, "--broker", broker, "--result-backend", backend, "-Q", queue,
                "--log-level", "warn"]
        configs.append(("warmpool-worker, -c 1 --prefetch 1 (defaults, acks_late)", ours, env,
                        a.n_ours, ("ours", 1)))
        for pf in a.ours_prefetch:
            configs.append(("warmpool-worker, -c 1 --prefetch %d (acks_late)" % pf,
                            ours + ["--prefetch", str(pf)], env, a.n_ours, ("ours", pf)))
        samples = {c[0]: [] for c in configs}
        statuses = set()
        for _ in range(a.rounds):  # interleaved, so load changes hit every worker alike
            for label, argv, run_env, n, _ in configs:
                m, st = run_worker("w", argv, run_env, broker, backend, n, template, queue,
                                   server.pid)
                samples[label].append(m)
                statuses |= st
        rows = []
        for label, _, _, n, key in configs:
            med = lambda k: statistics.median(x[k] for x in samples[label])
            rows.append((label, n, med("rate"), med("worker_cpu_us"), med("redis_cpu_us"),
                         [round(x["rate"]) for x in samples[label]], key))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(workdir, ignore_errors=True)

    py = rows[0]
    same = {key[1]: rate for _, _, rate, _, _, _, key in rows if key and key[0] == "python"}
    # This VM's speed changes within a run (the rates of one config can differ 2x between
    # rounds), so also pair each round with the Python run of the same round.
    py_rounds = [x["rate"] for x in samples[configs[0][0]]]
    paired = {label: statistics.median(x["rate"] / p for x, p in zip(samples[label], py_rounds))
              for label, _, _, _, _ in configs}
    print("| worker | tasks | tasks/s (median of %d) | vs Python defaults | vs Python defaults, "
          "same round (median) | vs Python, same settings | runs | worker CPU us/task | vs "
          "Python defaults | redis-server CPU us/task |" % a.rounds)
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for label, n, rate, wcpu, rcpu, runs, key in rows:
        like = ""
        if key and key[0] == "ours" and key[1] in same:
            like = "**%.1fx**" % (rate / same[key[1]])
        print("| %s | %d | %.0f | %.1fx | %.1fx | %s | %s | %.0f | %.1fx less | %.0f |"
              % (label, n, rate, rate / py[2], paired[label], like, runs, wcpu,
                 py[3] / max(wcpu, 1e-9), rcpu))
    for op in ("LPUSH", "RPOP"):
        if op in ceiling:
            print("| redis-benchmark %s ceiling (1 client, no pipelining) | %d | %.0f | %.1fx "
                  "| | | | | | |" % (op, a.redis_benchmark_n, ceiling[op], ceiling[op] / py[2]))
    print()
    print("statuses seen: %s" % sorted(statuses))
    print("load average at the end: %s" % open("/proc/loadavg").read().strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
