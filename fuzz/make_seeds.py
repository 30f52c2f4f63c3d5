#!/usr/bin/python3
"""Writes the fuzz seed corpora (fuzz/corpus/<target>/) from real Python Celery output.

Task envelopes are published by Debian's Celery 5.2.6 / kombu 5.2.4 into a throwaway
redis-server on a free loopback port (no worker runs) and read back with LRANGE, byte for byte;
result values are written by Celery's own Redis backend (mark_as_done, mark_as_failure, ...).
The text-only targets (Redis URLs, warm windows, ScaledObject metadata) get the forms the docs
and manifests use; the policy step (policy_decision) gets runs of readings in its binary layout. Re-run after a Celery upgrade: python3 fuzz/make_seeds.py
"""
import datetime
import hashlib
import json
import os
import pathlib
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

import redis
from celery import Celery, chain, chord, group, signature

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write(target: str, name: str, data: bytes) -> None:
    folder = ROOT / target
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:10]
    (folder / f"{name}-{digest}").write_bytes(data)


def send_tasks(app: Celery) -> None:
    add = "tasks.add"
    app.send_task(add, args=[2, 3])
    app.send_task(add, kwargs={"x": 1.5, "y": None, "tags": ["a", "é", "雪"], "nested": {"k": [1, {}]}})
    app.send_task(add, args=[1], countdown=30)
    app.send_task(add, args=[1], eta=datetime.datetime(2030, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc))
    app.send_task(add, args=[1], expires=600)
    app.send_task(add, args=[1], priority=7)
    app.send_task(add, args=[1], time_limit=60, soft_time_limit=50, ignore_result=True)
    app.send_task(add, args=[1], headers={"x-trace": "abc", "n": 3})
    app.send_task(add, args=[1], retries=2, queue="gpu", routing_key="gpu")
    app.send_task(add, args=[1], link=signature("tasks.done"), link_error=signature("tasks.err"))
    chain(signature(add, args=(1, 2)), signature(add, args=(3,)), signature("tasks.last")).apply_async()
    group(signature(add, args=(i, i)) for i in range(3)).apply_async()
    chord([signature(add, args=(i,)) for i in range(2)], signature("tasks.tsum")).apply_async()
    app.send_task("imagery.change_detection", kwargs={"before": "a.tif", "after": "b.tif",
                                                      "out": "out/x", "threshold": 0.25})


def envelopes(r: redis.Redis) -> list:
    out = []
    for key in sorted(r.keys("*")):
        if r.type(key) == b"list":
            out += r.lrange(key, 0, -1)
    return out


def capture_envelopes(url: str, r: redis.Redis, protocol: int) -> None:
    app = Celery("seeds", broker=url + "/0", backend=url + "/1")
    app.conf.task_protocol = protocol
    r.flushall()
    send_tasks(app)
    for i, env in enumerate(envelopes(r)):
        write("celery_message", f"v{protocol}", env)
        # kombu's unacked hash value: [envelope, exchange, routing_key] (Channel._do_restore).
        if protocol == 2 and i < 3:
            write("celery_message", "unacked", json.dumps([json.loads(env), "", "celery"]).encode())
    app.close()


def capture_results(url: str, r: redis.Redis) -> None:
    app = Celery("seeds", broker=url + "/0", backend=url + "/1")
    b = app.backend
    b.mark_as_started("t-started", pid=4242, hostname="celery@host")
    b.mark_as_done("t-done", {"changed": 0.125, "paths": ["out/x.tif"]})
    b.mark_as_done("t-none", None)
    try:
        raise ValueError("boom", 3)
    except ValueError as exc:
        b.mark_as_failure("t-fail", exc, traceback="Traceback (most recent call last):\n  ...")
        b.mark_as_retry("t-retry", exc, traceback="Traceback ...")
    b.mark_as_revoked("t-revoked", "terminated")
    results = app.GroupResult("g-1", [app.AsyncResult("t-done"), app.AsyncResult("t-none")])
    results.save(backend=b)
    db1 = redis.Redis.from_url(url + "/1")
    for key in sorted(db1.keys("*")):
        if db1.type(key) == b"string":
            write("celery_result", key.decode().rsplit("-", 1)[0], db1.get(key))
    app.close()


def write_text_seeds() -> None:
    for i, url in enumerate(["redis://127.0.0.1:6379/0", "redis://redis:6379/1",
                             "redis://:CHANGE-ME@redis.example.internal:6379/0",
                             "redis://user:pass@[::1]:6380/2", "127.0.0.1:6379", "redis:6379/3",
                             "redis://host",
                             "rediss://celery:k%2By%3D@x.redis.cache.windows.net:6380/0"
                             "?ssl_cert_reqs=required&ssl_ca_certs=/etc/ssl/ca.pem",
                             "sentinel://:pw@s1:26379/0;sentinel://s2:26379?master_name=mymaster"]):
        write("redis_url", f"url{i}", url.encode())
    for i, text in enumerate(["Mon-Fri 07:00-19:00 UTC=2", "Mon-Fri 07:00-19:00 UTC=2; Sat 10:00-14:00 UTC=1",
                              "Daily 00:00-24:00=1", "Fri-Mon 22:00-23:59 UTC=3",
                              "mon,wed,Sat-Sun 08:30-09:45=0", ""]):
        write("warm_windows", f"ww{i}", text.encode())
    base = {"scalerAddress": "warmpool-scaler.ns.svc:6000", "redis": "default", "queues": "gpu",
            "priorityLevels": "0,3,6,9", "countInFlight": "true", "tasksPerReplica": "1",
            "activationBacklog": "0", "minWarmReplicas": "0", "maxReplicas": "10",
            "keepAlive": "auto", "coldStartSeconds": "300", "nodeUnneededSeconds": "600"}
    variants = [{}, {"warmWindows": "Mon-Fri 07:00-19:00 UTC=2", "drainSeconds": "80",
                     "taskSeconds": "90"},
                {"redisAddress": "redis.example:6379/0", "keyPrefix": "prod:", "queues": "a,b,c",
                 "waitCostPerHour": "4.5", "replicaCostPerHour": "1.2", "prewarm": "off",
                 "etaPrewarm": "false", "keepAlive": "120", "drainSeconds": "off"},
                {"targetWaitSeconds": "600", "releasesPerHour": "2.5", "forecast": "on",
                 "cooldownSeconds": "60", "scaleDownWindowSeconds": "900"}]
    for i, v in enumerate(variants):
        meta = {**base, **v}
        write("scaler_metadata", f"md{i}", "".join(f"{k}={val}\n" for k, val in meta.items()).encode())


def reading(dt, pending=0, in_flight=0, scheduled=0, eta=None, measured_ms=None, count=0,
            oldest=0, name=0, by_name=False, roundtrip=False) -> bytes:
    """One reading as policy_decision_fuzz.cpp decodes it (36 bytes, little-endian)."""
    flags = (1 if measured_ms is not None else 0) | (2 if eta is not None else 0) | \
        (4 if by_name else 0) | (8 if roundtrip else 0)
    return struct.pack("<HBBQQIiIHH", dt, flags, name, pending, in_flight, scheduled, eta or 0,
                       measured_ms or 0, count, oldest)


def write_policy_decision_seeds() -> None:
    """Metadata as in the manifests, then runs of readings: a cold burst that drains, an idle
    gap and periodic bursts (the pre-warm and the release budget), an eta task, a trickle."""
    shipped = "queues=gpu\ncoldStartSeconds=300\nnodeUnneededSeconds=600\ncooldownSeconds=60\n"
    burst = [reading(0)] + [reading(10, pending=40 - 4 * k, in_flight=min(k, 4), name=k % 3,
                                    measured_ms=45000 if k > 3 else None, count=1 if k > 3 else 0,
                                    by_name=k % 2 == 0, oldest=10 * k) for k in range(10)]
    idle = [reading(60, roundtrip=k == 3) for k in range(20)]
    periodic = (burst + idle) * 4
    eta = [reading(5, scheduled=3, eta=400 - 5 * k) for k in range(10)] + \
        [reading(5, in_flight=3, measured_ms=30000, count=3, by_name=True) for _ in range(6)]
    trickle = [reading(30 + k % 7, pending=k % 2, in_flight=(k + 1) % 2, measured_ms=800, count=1)
               for k in range(60)]
    runs = {"burst": (shipped, burst + idle), "periodic": (shipped, periodic),
            "eta": (shipped + "etaPrewarm=true\n", eta),
            "trickle": (shipped + "keepAlive=120\nreleasesPerHour=off\n", trickle),
            "windows": (shipped + "warmWindows=Mon-Fri 07:00-19:00 UTC=2\ntaskSeconds=45\n"
                        "forecast=on\n", periodic)}
    for name, (meta, readings) in runs.items():
        write("policy_decision", name, meta.encode() + b"--\n" + b"".join(readings))


def main() -> int:
    for target in ("celery_message", "celery_result", "redis_url", "warm_windows", "scaler_metadata",
                   "policy_decision"):
        shutil.rmtree(ROOT / target, ignore_errors=True)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no", "--dir", tmp],
                                  stdout=subprocess.DEVNULL)
        try:
            url = f"redis://127.0.0.1:{port}"
            r = redis.Redis.from_url(url + "/0")
            for _ in range(100):
                try:
                    r.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.05)
            capture_envelopes(url, r, protocol=2)
            capture_envelopes(url, r, protocol=1)
            capture_results(url, r)
        finally:
            server.terminate()
            server.wait()
    write_text_seeds()
    write_policy_decision_seeds()
    for target in sorted(os.listdir(ROOT)):
        print(f"{target}: {len(os.listdir(ROOT / target))} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
