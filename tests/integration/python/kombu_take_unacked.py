#!/usr/bin/python3
"""Takes one message from a queue the way a Celery worker does (kombu basic_get, no_ack=False),
so it sits in kombu's `unacked` hash, prints TAKEN <routing_key>, and holds it until killed.

Kill it with SIGKILL to leave the entry in place (a clean exit would restore it).
"""
import argparse
import sys
import time

from kombu import Connection


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--broker", required=True)
    p.add_argument("--queue", default="celery")
    p.add_argument("--keyprefix", default="")
    p.add_argument("--timeout", type=float, default=10.0)
    a = p.parse_args()
    opts = {"global_keyprefix": a.keyprefix} if a.keyprefix else {}
    with Connection(a.broker, transport_options=opts) as conn:
        channel = conn.channel()
        deadline = time.time() + a.timeout
        while time.time() < deadline:
            message = channel.basic_get(a.queue, no_ack=False)
            if message is not None:
                print("TAKEN", message.delivery_info.get("routing_key"), flush=True)
                while True:  # hold it in `unacked` until killed
                    time.sleep(1)
            time.sleep(0.05)
    print("NOTHING", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
