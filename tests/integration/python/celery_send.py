#!/usr/bin/python3
"""Sends Celery tasks exactly as an application does (Debian's Celery 5.2.6, send_task).

Prints one task id per line. Used by integration tests and the demo.
"""
import argparse
import sys

from celery import Celery


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--broker", required=True)
    p.add_argument("--backend", default=None)
    p.add_argument("--queue", default="celery")
    p.add_argument("--task", default="warmpool.ping")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--priority", type=int, default=None)
    p.add_argument("--countdown", type=float, default=None)
    p.add_argument("--args", default="[]", help="JSON list of positional args")
    p.add_argument("--kwargs", default="{}", help="JSON object of keyword args")
    p.add_argument("--keyprefix", default="", help="kombu global_keyprefix")
    a = p.parse_args()

    import json

    app = Celery("warmpool-test", broker=a.broker, backend=a.backend)
    if a.keyprefix:
        app.conf.broker_transport_options = {"global_keyprefix": a.keyprefix}
    args = json.loads(a.args)
    kwargs = json.loads(a.kwargs)
    for _ in range(a.count):
        r = app.send_task(a.task, args=args, kwargs=kwargs, queue=a.queue,
                          priority=a.priority, countdown=a.countdown)
        print(r.id, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
