#!/usr/bin/python3
"""The demo's Python application: sends Celery tasks the way any app does (send_task, Debian's
Celery 5.2.6) and, with --wait, blocks on AsyncResult.get() and prints each result as JSON.
"""
import argparse
import json
import sys

from celery import Celery


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--broker", required=True)
    p.add_argument("--task", required=True)
    p.add_argument("--queue", default="celery")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--priority", type=int, default=None)
    p.add_argument("--args", default="[]")
    p.add_argument("--kwargs", default="{}")
    p.add_argument("--wait", type=float, default=0, help="seconds to wait for each result")
    a = p.parse_args()
    app = Celery("demo", broker=a.broker, backend=a.broker)
    results = [app.send_task(a.task, args=json.loads(a.args), kwargs=json.loads(a.kwargs),
                             queue=a.queue, priority=a.priority) for _ in range(a.count)]
    for r in results:
        if a.wait:
            value = r.get(timeout=a.wait)
            print(json.dumps({"task": a.task, "id": r.id, "state": r.state, "result": value}))
        else:
            print(json.dumps({"task": a.task, "id": r.id, "state": "SENT"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
