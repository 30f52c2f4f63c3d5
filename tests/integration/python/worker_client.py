"""Python Celery 5.2.6 client used by the warmpool-worker integration tests.

Run with /usr/bin/python3 (Debian's python3-celery). Every sub-command prints one JSON object on
stdout, so the C++ test can assert on values. Sub-commands:
  call      send one task with send_task and wait with AsyncResult.get()
  send      send N tasks without waiting; prints their ids
  collect   wait for given ids with AsyncResult.get(); prints statuses
  sweep     run kombu's visibility-timeout restore (QoS.restore_visible) once
  events    capture celery events (EventReceiver) for a while; prints counts per type and host
  control   broadcast a remote-control command (ping, enable_events, ...); prints the replies
"""
import argparse
import json
import sys
import time

from celery import Celery


def make_app(args):
    app = Celery(broker=args.broker, backend=args.backend)
    opts = {}
    if getattr(args, "visibility_timeout", None):
        opts["visibility_timeout"] = args.visibility_timeout
    if getattr(args, "key_prefix", None):
        opts["global_keyprefix"] = args.key_prefix
    if opts:
        app.conf.broker_transport_options = opts
    return app


def describe(result, timeout):
    start = time.time()
    out = {"id": result.id}
    try:
        value = result.get(timeout=timeout)
        out.update(status="SUCCESS", result=value)
    except Exception as exc:  # the point: which class Celery rebuilt
        out.update(status=result.state, exc_type=type(exc).__name__,
                   exc_module=type(exc).__module__, exc_args=[str(a) for a in exc.args])
    out["elapsed"] = time.time() - start
    return out


def cmd_call(args):
    app = make_app(args)
    options = {}
    if args.priority is not None:
        options["priority"] = args.priority
    if args.countdown is not None:
        options["countdown"] = args.countdown
    if args.expires is not None:
        options["expires"] = args.expires
    if args.queue:
        options["queue"] = args.queue
    if args.time_limit is not None:
        options["time_limit"] = args.time_limit
    sent = time.time()
    r = app.send_task(args.task, args=json.loads(args.args), kwargs=json.loads(args.kwargs),
                      **options)
    out = describe(r, args.timeout)
    out["since_send"] = time.time() - sent
    print(json.dumps(out))


def cmd_send(args):
    app = make_app(args)
    ids = []
    with app.producer_or_acquire() as producer:
        for _ in range(args.n):
            r = app.send_task(args.task, args=json.loads(args.args), queue=args.queue or None,
                              producer=producer)
            ids.append(r.id)
    print(json.dumps({"ids": ids}))


def cmd_collect(args):
    app = make_app(args)
    ids = json.load(open(args.ids_file))["ids"]
    statuses = {}
    for i in ids:
        out = describe(app.AsyncResult(i), args.timeout)
        statuses[out["status"]] = statuses.get(out["status"], 0) + 1
    print(json.dumps({"statuses": statuses, "n": len(ids)}))


def cmd_sweep(args):
    app = make_app(args)
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        channel.qos.restore_visible()
        print(json.dumps({"visibility_timeout": channel.visibility_timeout}))


def cmd_events(args):
    app = make_app(args)
    counts = {}
    hosts = {}
    deadline = time.time() + args.seconds

    def on_event(event):
        counts[event["type"]] = counts.get(event["type"], 0) + 1
        hosts.setdefault(event["type"], set()).add(event.get("hostname"))
        if args.until and args.until in counts:
            raise KeyboardInterrupt

    with app.connection() as conn:
        recv = app.events.Receiver(conn, handlers={"*": on_event})
        try:
            for _ in recv.itercapture(limit=None, timeout=args.seconds, wakeup=True):
                if time.time() > deadline:
                    break
        except (KeyboardInterrupt, OSError, Exception) as exc:  # timeout ends the capture
            if not isinstance(exc, KeyboardInterrupt) and "timed out" not in str(exc).lower():
                if not isinstance(exc, Exception) or time.time() < deadline - 0.5:
                    pass
    print(json.dumps({"counts": counts,
                      "hosts": {k: sorted(h for h in v if h) for k, v in hosts.items()}}))


def cmd_revoke(args):
    """Sends a task with a countdown, revokes it, and reports what get() raises."""
    app = make_app(args)
    r = app.send_task(args.task, countdown=args.countdown)
    time.sleep(args.delay)
    r.revoke()
    print(json.dumps(describe(r, args.timeout)))


def cmd_control(args):
    app = make_app(args)
    replies = app.control.broadcast(args.method, reply=True, timeout=args.timeout)
    merged = {}
    for r in replies or []:
        merged.update(r)
    print(json.dumps(merged))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--broker", required=True)
    p.add_argument("--backend", required=True)
    p.add_argument("--visibility-timeout", type=float)
    p.add_argument("--key-prefix")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("call")
    c.add_argument("task")
    c.add_argument("--args", default="[]")
    c.add_argument("--kwargs", default="{}")
    c.add_argument("--priority", type=int)
    c.add_argument("--countdown", type=float)
    c.add_argument("--expires", type=float)
    c.add_argument("--time-limit", type=float)
    c.add_argument("--queue")
    c.add_argument("--timeout", type=float, default=20)
    s = sub.add_parser("send")
    s.add_argument("task")
    s.add_argument("--args", default="[]")
    s.add_argument("--n", type=int, default=1)
    s.add_argument("--queue")
    g = sub.add_parser("collect")
    g.add_argument("ids_file")
    g.add_argument("--timeout", type=float, default=30)
    sub.add_parser("sweep")
    e = sub.add_parser("events")
    e.add_argument("--seconds", type=float, default=5)
    e.add_argument("--until")
    v = sub.add_parser("revoke")
    v.add_argument("task")
    v.add_argument("--countdown", type=float, default=2)
    v.add_argument("--delay", type=float, default=0.5)
    v.add_argument("--timeout", type=float, default=20)
    k = sub.add_parser("control")
    k.add_argument("method")
    k.add_argument("--timeout", type=float, default=1.5)
    args = p.parse_args()
    {"call": cmd_call, "send": cmd_send, "collect": cmd_collect, "sweep": cmd_sweep,
     "events": cmd_events, "control": cmd_control, "revoke": cmd_revoke}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
