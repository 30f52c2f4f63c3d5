#!/usr/bin/python3
"""Sends N Celery tasks with extra message headers, as apply_async(headers=...) does (Debian's
Celery 5.2.6). kombu writes `headers` before `properties`, so header values that look like
properties (delivery_tag, delivery_info) come first in the raw envelope. Prints {"ids": [...]}
(the input of worker_client.py collect).
"""
import argparse
import json
import sys

from celery import Celery


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--broker", required=True)
    p.add_argument("--backend", required=True)
    p.add_argument("--task", default="warmpool.ping")
    p.add_argument("--args", default="[]", help="JSON list of positional args")
    p.add_argument("--headers", default="{}", help="JSON object merged into the headers")
    p.add_argument("--queue", default=None)
    p.add_argument("--n", type=int, default=1)
    a = p.parse_args()
    app = Celery(broker=a.broker, backend=a.backend)
    ids = []
    with app.producer_or_acquire() as producer:
        for _ in range(a.n):
            r = app.send_task(a.task, args=json.loads(a.args), headers=json.loads(a.headers),
                              queue=a.queue, producer=producer)
            ids.append(r.id)
    print(json.dumps({"ids": ids}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
