#!/usr/bin/python3
"""Soak of warmpool-worker: --tasks warmpool.ping tasks through one worker, with throughput, RSS,
open fds and threads taken at every --window results; then every result key is checked.

Usage: /usr/bin/python3 bench/worker/worker_soak.py --worker build/worker/warmpool-worker
         [--tasks 100000] [--window 10000] [--producer lpush|celery] [--worker-arg ARG]...

Producer: `lpush` (default) copies one message that Python Celery 5.2.6's send_task wrote, with a
fresh task id and delivery tag each, and LPUSHes the copies onto the queue in pipelines of 1,000,
exactly where kombu's Redis transport puts them; `celery` sends every task with send_task (slower:
Python's producer, not the worker, sets the pace of the fill). Either way the queue is filled
before the worker starts, so the producer takes no CPU while the worker is measured.

Prints one JSON line (machine-readable), one human line, and the command that reproduces it.
Exit status 0 when every check in "checks" holds.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import redis
from celery import Celery

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_worker import cpu_seconds, free_port, start_redis, template_message  # noqa: E402


def proc_sample(pid):
    """RSS (KiB), threads, open fds and CPU seconds of `pid`, from /proc."""
    rss = threads = None
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return {"rss_kib": rss, "threads": threads, "fds": len(os.listdir("/proc/%d/fd" % pid)),
            "cpu_s": cpu_seconds(pid)}


def fill_lpush(broker, queue, template, n):
    env = json.loads(template)
    old_id, old_tag = env["headers"]["id"], env["properties"]["delivery_tag"]
    r = redis.Redis.from_url(broker)
    ids = []
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        task_id = str(uuid.uuid4())
        ids.append(task_id)
        pipe.lpush(queue, template.replace(old_id, task_id).replace(old_tag, str(uuid.uuid4())))
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()
    return ids


def fill_celery(broker, backend, queue, n):
    app = Celery(broker=broker, backend=backend)
    return [app.send_task("warmpool.ping", queue=queue).id for _ in range(n)]


def check_results(backend, ids):
    """Counts of missing results and of results that are not SUCCESS/"pong"."""
    r = redis.Redis.from_url(backend)
    missing = wrong = 0
    for i in range(0, len(ids), 1000):
        keys = ["celery-task-meta-" + t for t in ids[i:i + 1000]]
        for raw in r.mget(keys):
            if raw is None:
                missing += 1
                continue
            meta = json.loads(raw)
            if meta.get("status") != "SUCCESS" or meta.get("result") != "pong":
                wrong += 1
    return missing, wrong


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--worker", required=True, help="path of warmpool-worker")
    p.add_argument("--tasks", type=int, default=100000)
    p.add_argument("--window", type=int, default=10000, help="results per window")
    p.add_argument("--producer", choices=["lpush", "celery"], default="lpush")
    p.add_argument("--worker-arg", action="append", default=[],
                   help="extra warmpool-worker argument (repeatable)")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds for all results [default: 120 + tasks / 200]")
    p.add_argument("--max-rate-spread", type=float, default=0.15,
                   help="every window's tasks/s (and CPU per task) within this fraction of "
                        "the median")
    p.add_argument("--max-rss-ratio", type=float, default=1.10,
                   help="RSS at the last window / RSS at the first window")
    p.add_argument("--json-out", default=None)
    a = p.parse_args()
    if a.tasks < 2 * a.window or a.window < 1:
        p.error("--tasks must be at least two windows")
    timeout = a.timeout if a.timeout is not None else 120 + a.tasks / 200
    command = "/usr/bin/python3 bench/worker/worker_soak.py " + " ".join(sys.argv[1:])

    workdir = tempfile.mkdtemp(prefix="worker-soak-")
    port = free_port()
    server = start_redis(port, workdir)
    broker = "redis://127.0.0.1:%d/0" % port
    backend = "redis://127.0.0.1:%d/1" % port
    queue = "soak"
    proc = None
    log_path = os.path.join(workdir, "worker.log")
    try:
        r_broker = redis.Redis.from_url(broker)
        r_backend = redis.Redis.from_url(backend)
        t_fill = time.time()
        if a.producer == "lpush":
            ids = fill_lpush(broker, queue, template_message(broker, backend, queue), a.tasks)
        else:
            ids = fill_celery(broker, backend, queue, a.tasks)
        fill_s = time.time() - t_fill
        assert r_broker.llen(queue) == a.tasks, "queue holds %d" % r_broker.llen(queue)
        r_backend.flushdb()

        argv = [a.worker, "--broker", broker, "--result-backend", backend, "-Q", queue,
                "--log-level", "warn"] + a.worker_arg
        log = open(log_path, "wb")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        started = proc_sample(proc.pid)
        windows = []  # (time, results, proc sample) at each window boundary
        first = None
        deadline = time.time() + timeout
        next_mark = 1
        while time.time() < deadline:
            done = r_backend.dbsize()
            now = time.time()
            if first is None and done >= 1:
                first = (now, done, proc_sample(proc.pid))
                next_mark = a.window
            while first is not None and done >= next_mark and next_mark <= a.tasks:
                windows.append((now, done, proc_sample(proc.pid)))
                next_mark += a.window
            if done >= a.tasks:
                break
            if proc.poll() is not None:
                raise RuntimeError("worker exited early with %s" % proc.returncode)
            time.sleep(0.01)
        if first is None:
            raise RuntimeError("no result within %ss" % timeout)
        finished = r_backend.dbsize() >= a.tasks
        time.sleep(0.5)  # the last acks
        left_in_queue = r_broker.llen(queue)
        unacked = r_broker.hlen("unacked")
        end_sample = proc_sample(proc.pid)
        missing, wrong = check_results(backend, ids)
        proc.terminate()
        exit_code = proc.wait(30)
        proc = None
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
        server.terminate()
        server.wait()
        log_bytes = os.path.getsize(log_path) if os.path.exists(log_path) else -1
        shutil.rmtree(workdir, ignore_errors=True)

    marks = [first] + windows
    rates, cpu_us, rss, fds, threads = [], [], [], [], []
    for (t0, n0, s0), (t1, n1, s1) in zip(marks, marks[1:]):
        rates.append((n1 - n0) / max(t1 - t0, 1e-9))
        # CPU per task moves far less with the shared VM's load than tasks/s does.
        cpu_us.append(1e6 * (s1["cpu_s"] - s0["cpu_s"]) / max(n1 - n0, 1))
        rss.append(s1["rss_kib"])
        fds.append(s1["fds"])
        threads.append(s1["threads"])
    median = statistics.median(rates) if rates else 0
    spread = [r / median - 1 for r in rates] if median else []
    cpu_median = statistics.median(cpu_us) if cpu_us else 0
    cpu_spread = [c / cpu_median - 1 for c in cpu_us] if cpu_median else []
    total_s = marks[-1][0] - marks[0][0] if len(marks) > 1 else 0
    worker_cpu = end_sample["cpu_s"] - started["cpu_s"]
    ref = len(rss) // 3
    checks = {
        "all_results": finished and missing == 0 and wrong == 0,
        "queue_drained": left_in_queue == 0 and unacked == 0,
        "rate_steady": bool(spread) and max(abs(x) for x in spread) <= a.max_rate_spread,
        "cpu_per_task_steady": bool(cpu_spread) and max(abs(x) for x in cpu_spread)
        <= a.max_rate_spread,
        # Against the window a third of the way in: the worker opens a connection lazily a few
        # seconds after its start (fds 5 -> 6 once), which is not growth.
        "rss_flat": bool(rss) and rss[-1] / rss[ref] <= a.max_rss_ratio,
        "fds_flat": bool(fds) and fds[-1] <= fds[ref],
        "threads_flat": bool(threads) and threads[-1] <= threads[ref],
        "clean_exit": exit_code == 0,
    }
    out = {
        "bench": "worker_soak",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": command,
        "producer": a.producer,
        "tasks": a.tasks,
        "window": a.window,
        "fill_s": round(fill_s, 2),
        "tasks_per_s": round((marks[-1][1] - marks[0][1]) / max(total_s, 1e-9), 1),
        "tasks_per_s_per_window": [round(x, 1) for x in rates],
        "window_vs_median": [round(x, 3) for x in spread],
        "worker_cpu_us_per_task_per_window": [round(x, 1) for x in cpu_us],
        "reference_window": ref,
        "rss_kib_per_window": rss,
        "fds_per_window": fds,
        "threads_per_window": threads,
        "rss_kib_first_result": marks[0][2]["rss_kib"],
        "fds_first_result": marks[0][2]["fds"],
        "worker_cpu_s": round(worker_cpu, 2),
        "worker_cpu_us_per_task": round(1e6 * worker_cpu / a.tasks, 1),
        "results_missing": missing,
        "results_wrong": wrong,
        "left_in_queue": left_in_queue,
        "unacked_left": unacked,
        "worker_exit_code": exit_code,
        "worker_log_bytes": log_bytes,
        "load_average_end": open("/proc/loadavg").read().strip(),
        "checks": checks,
        "pass": all(checks.values()),
    }
    line = json.dumps(out, separators=(",", ":"))
    print(line)
    if a.json_out:
        with open(a.json_out, "w") as f:
            f.write(line + "\n")
    print("worker soak %d tasks (%s): %.0f tasks/s, windows %s (median %.0f, spread %+.0f%%..%+.0f%%); "
          "RSS %s -> %s KiB; fds %s -> %s; threads %s -> %s; results missing %d wrong %d: %s"
          % (a.tasks, a.producer, out["tasks_per_s"], [round(x) for x in rates], median,
             100 * min(spread or [0]), 100 * max(spread or [0]), rss[0] if rss else "?",
             rss[-1] if rss else "?", fds[0] if fds else "?", fds[-1] if fds else "?",
             threads[0] if threads else "?", threads[-1] if threads else "?", missing, wrong,
             "PASS" if out["pass"] else "FAIL"))
    print("reproduce: %s" % command)
    return 0 if out["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
