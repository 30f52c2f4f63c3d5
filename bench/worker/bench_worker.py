#!/usr/bin/python3
"""warmpool.ping tasks/s: warmpool-worker vs a Python Celery 5.2.6 worker (-P solo), same
redis-server, same result backend, in one run; plus the Redis-only ceiling (redis-benchmark
LPUSH/RPOP). Prints a Markdown table; ratios are against the Python worker of the same run.

Usage: /usr/bin/python3 bench/worker/bench_worker.py --worker build/worker/warmpool-worker
         [--n-ours 20000] [--n-python 3000]

Method: the queue is pre-filled with N Celery 5.2.6 protocol-2 messages (a message made by
send_task, copied with fresh task ids and delivery tags), then the worker is started; the rate
is (N - 1) / (time of the last result - time of the first result), read by polling DBSIZE of the
result-backend DB, so start-up time is not counted. Each worker runs alone.
"""
import argparse
import json
import os
import re
import shutil
import socket
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
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        new_id = str(uuid.uuid4())
        msg = template.replace(old_id, new_id).replace(old_tag, str(uuid.uuid4()))
        pipe.lpush(queue, msg)
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()
    assert r.llen(queue) == n


def measure(backend, n, proc, timeout):
    r = redis.Redis.from_url(backend)
    first = last = None
    deadline = time.time() + timeout
    while time.time() < deadline:
        done = r.dbsize()
        now = time.time()
        if first is None and done >= 1:
            first = (now, done)
        if done >= n:
            last = (now, done)
            break
        if proc.poll() is not None:
            raise RuntimeError("worker exited early with %s" % proc.returncode)
        time.sleep(0.005)
    if last is None:
        raise RuntimeError("only %d of %d results within %ss" % (r.dbsize(), n, timeout))
    return (last[1] - first[1]) / max(last[0] - first[0], 1e-9)


def run_worker(name, argv, env, broker, backend, n, template, queue, timeout=300):
    redis.Redis.from_url(backend).flushdb()
    prefill(broker, queue, template, n)
    log = tempfile.NamedTemporaryFile(prefix="bench-%s-" % name, suffix=".log", delete=False)
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        rate = measure(backend, n, proc, timeout)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    statuses = set()
    r = redis.Redis.from_url(backend)
    for key in r.scan_iter(count=1000):
        statuses.add(json.loads(r.get(key))["status"])
        break
    return rate, statuses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--worker", required=True, help="path of warmpool-worker")
    p.add_argument("--n-ours", type=int, default=20000)
    p.add_argument("--n-python", type=int, default=3000)
    p.add_argument("--redis-benchmark-n", type=int, default=100000)
    p.add_argument("--ours-prefetch", type=int, nargs="*", default=[4, 64],
                   help="extra warmpool-worker runs with these --prefetch values")
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
                   PYTHONPATH=PYTASKS_DIR, WORKER_PYTASKS_ACKS_LATE="0",
                   WORKER_PYTASKS_PREFETCH="4")
        py_rate, py_status = run_worker(
            "python", ["/usr/bin/python3", "-m", "celery", "-A", "worker_pytasks", "worker",
                       "-P", "solo", "-Q", queue, "--without-gossip", "--without-mingle",
                       "--without-heartbeat", "--loglevel", "WARNING"],
            env, broker, backend, a.n_python, template, queue)
        rows = [("Python Celery 5.2.6 worker, -P solo, prefetch x4, early ack (Celery defaults)",
                 py_rate, py_status)]
        configs = [("warmpool-worker, -c 1 --prefetch 1 (defaults, acks_late)", [])]
        for pf in a.ours_prefetch:
            configs.append(("warmpool-worker, -c 1 --prefetch %d (acks_late)" % pf,
                            ["--prefetch", str(pf)]))
        for label, extra in configs:
            rate, status = run_worker(
                "ours", [a.worker, "--broker", broker, "--result-backend", backend, "-Q", queue,
                         "--log-level", "warn"] + extra,
                env, broker, backend, a.n_ours, template, queue)
            rows.append((label, rate, status))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(workdir, ignore_errors=True)

    print("| worker | tasks | tasks/s | vs Python |")
    print("|---|---:|---:|---:|")
    for label, rate, status in rows:
        n = a.n_python if label.startswith("Python") else a.n_ours
        print("| %s | %d | %.0f | %.1fx |" % (label, n, rate, rate / py_rate))
    for op in ("LPUSH", "RPOP"):
        if op in ceiling:
            print("| redis-benchmark %s ceiling (1 client, no pipelining) | %d | %.0f | %.1fx |"
                  % (op, a.redis_benchmark_n, ceiling[op], ceiling[op] / py_rate))
    print()
    print("statuses seen: %s" % sorted(set().union(*[r[2] for r in rows])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
