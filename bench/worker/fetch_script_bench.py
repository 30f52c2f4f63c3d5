#!/usr/bin/python3
"""Redis CPU per message of warmpool-worker's take script (worker/lua/fetch.lua).

Usage: /usr/bin/python3 bench/worker/fetch_script_bench.py [--source worker/lua/fetch.lua ...]
         [--n 5000] [--batch 1 16] [--rounds 3] [--headers '{"meta": {"k": "v"}}']

Method: a private redis-server on a free loopback port; N protocol-2 messages sent by Python
Celery 5.2.6 (send_task, one producer); the script is taken from --source: a .lua file, or a
C++ file holding it as kFetchLua (older trees: `git show REV:worker/broker.cpp > old.cpp`), so
both can be measured the same way; it is
run with EVALSHA until the queue is empty, `batch` messages a call. Redis CPU per message is
EVALSHA's usec from INFO commandstats divided by N (the commands the script calls are
included in it). With several --source files the rounds alternate between them (the machine's
load drifts); the median of the rounds is printed.
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import redis
from celery import Celery

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def fetch_lua(source):
    text = open(source).read()
    if source.endswith(".lua"):
        return text
    m = re.search(r'kFetchLua = R"lua\((.*?)\)lua"', text, re.S)
    if not m:
        raise SystemExit("no kFetchLua in " + source)
    return m.group(1)


def one_round(r, url, lua, n, batch, headers):
    r.flushall()
    app = Celery(broker=url)
    with app.producer_or_acquire() as producer:
        for _ in range(n):
            app.send_task("warmpool.ping", headers=headers, producer=producer)
    sha = r.script_load(lua)
    r.config_resetstat()
    taken = 0
    while True:
        reply = r.evalsha(sha, 5, "unacked", "unacked_index", "inflight", "deadletter",
                          "celery", "%.6f" % time.time(), "bench@host", str(batch), "celery")
        if not reply:
            break
        taken += len(reply) // 4
    assert taken == n, (taken, n)
    assert r.llen("deadletter") == 0
    assert r.hlen("unacked") == n, r.hlen("unacked")
    stats = r.info("commandstats")["cmdstat_evalsha"]
    return stats["usec"] / n


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--source", nargs="+",
                   default=[os.path.join(HERE, "..", "..", "worker", "lua", "fetch.lua")])
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--batch", type=int, nargs="+", default=[1, 16])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--headers", default="{}", help="JSON merged into each message's headers")
    a = p.parse_args()
    import json
    headers = json.loads(a.headers)
    scripts = [(src, fetch_lua(src)) for src in a.source]
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="fetch-bench-")
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", workdir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = "redis://127.0.0.1:%d/0" % port
        r = redis.Redis(host="127.0.0.1", port=port)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        print("| source | batch | Redis CPU us/message (median of %d) |" % a.rounds)
        print("| --- | --- | --- |")
        for batch in a.batch:
            us = {src: [] for src, _ in scripts}
            for _ in range(a.rounds):
                for src, lua in scripts:
                    us[src].append(one_round(r, url, lua, a.n, batch, headers))
            for src, values in us.items():
                print("| %s | %d | %.2f (%s) |" % (src, batch, statistics.median(values),
                                                  ", ".join("%.2f" % u for u in values)))
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
