"""Python Celery 5.2.6 client used by the warmpool-worker integration tests.

Run with /usr/bin/python3 (Debian's python3-celery). Every sub-command prints one JSON object on
stdout, so the C++ test can assert on values. Sub-commands:
  call      send one task with send_task and wait with AsyncResult.get()
  send      send N tasks without waiting; prints their ids
  collect   wait for given ids with AsyncResult.get(); prints statuses
  sweep     run kombu's visibility-timeout restore (QoS.restore_visible) once
  events    capture celery events (EventReceiver) for a while; prints counts per type and host
  control   broadcast a remote-control command (ping, enable_events, ...); prints the replies
  terminate revoke(terminate=True) a running task; prints the replies and what get() raises
  canvas    run a Celery canvas (chain, link, link_error, chord) of warmpool.* tasks and wait
"""
import argparse
import json
import sys
import time

from celery import Celery, chain, chord


def make_app(args):
    app = Celery(broker=args.broker, backend=args.backend)
    opts = {}
    if getattr(args, "visibility_timeout", None):
        opts["visibility_timeout"] = args.visibility_timeout
    if getattr(args, "key_prefix", None):
        opts["global_keyprefix"] = args.key_prefix
    if getattr(args, "master_name", None):  # sentinel:// broker and backend
        opts["master_name"] = args.master_name
        app.conf.result_backend_transport_options = {"master_name": args.master_name}
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
    if args.link:
        options["link"] = [json.loads(args.link)]  # raw (maybe malformed) embedded signature
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
                              countdown=args.countdown, producer=producer)
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


def cmd_terminate(args):
    """AsyncResult(id).revoke(terminate=True, signal=...): prints the replies and what get()
    raises."""
    app = make_app(args)
    r = app.AsyncResult(args.task_id)
    replies = app.control.revoke(args.task_id, terminate=True, signal=args.signal, reply=True,
                                 timeout=1.5)
    merged = {}
    for reply in replies or []:
        merged.update(reply)
    out = describe(r, args.timeout)
    out["replies"] = merged
    print(json.dumps(out))


def cmd_control(args):
    app = make_app(args)
    replies = app.control.broadcast(args.method, reply=True, timeout=args.timeout)
    merged = {}
    for r in replies or []:
        merged.update(r)
    print(json.dumps(merged))


def cmd_canvas(args):
    """Builds one canvas with Celery's own API; prints the AsyncResult outcome(s) to check."""
    app = make_app(args)
    sig = app.signature
    out = {"kind": args.kind}
    if args.kind == "chain":
        # chain(sleep(0.01), sleep(), add(1) at priority 5): 0.01 -> 0.01 -> 1.01
        r = chain(sig("warmpool.sleep", args=(0.01,)), sig("warmpool.sleep"),
                  sig("warmpool.add", args=(1,)).set(priority=5)).apply_async()
        out["final"] = describe(r, args.timeout)
        out["middle"] = describe(r.parent, args.timeout)
        out["first"] = describe(r.parent.parent, args.timeout)
        out["first_id"] = r.parent.parent.id
        out["middle_parent"] = app.backend.get_task_meta(r.parent.id).get("parent_id")
    elif args.kind == "chain_failure":
        # The first step fails: the chain's last AsyncResult raises the same error.
        r = chain(sig("warmpool.sleep", args=(-1,)), sig("warmpool.add", args=(1,))).apply_async()
        out["final"] = describe(r, args.timeout)
        out["first_id"] = r.parent.id
    elif args.kind == "link":
        cb = sig("warmpool.add", args=(10,))
        cb.freeze()
        r = sig("warmpool.add", args=(2, 3)).apply_async(link=cb)
        out["task"] = describe(r, args.timeout)
        out["callback"] = describe(app.AsyncResult(cb.id), args.timeout)
    elif args.kind == "link_error":
        eb = sig("warmpool.echo")
        eb.freeze()
        never = sig("warmpool.echo", args=("never",))
        never.freeze()
        r = sig("warmpool.sleep", args=(-1,)).apply_async(link=never, link_error=eb)
        out["task"] = describe(r, args.timeout)
        out["task_id"] = r.id
        out["errback"] = describe(app.AsyncResult(eb.id), args.timeout)
        out["link_state"] = app.AsyncResult(never.id).state
    elif args.kind == "chord":
        r = chord([sig("warmpool.add", args=(i, i)) for i in range(args.n)])(
            sig("warmpool.xsum"))
        out["body"] = describe(r, args.timeout)
    elif args.kind == "chord_failure":
        header = [sig("warmpool.add", args=(1, 1)), sig("warmpool.sleep", args=(-1,))]
        eb = sig("warmpool.echo")
        eb.freeze()
        r = chord(header)(sig("warmpool.xsum").on_error(eb))
        out["body"] = describe(r, args.timeout)
        out["errback"] = describe(app.AsyncResult(eb.id), args.timeout)
        out["body_id"] = r.id
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--broker", required=True)
    p.add_argument("--backend", required=True)
    p.add_argument("--visibility-timeout", type=float)
    p.add_argument("--key-prefix")
    p.add_argument("--master-name")
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
    c.add_argument("--link")
    c.add_argument("--timeout", type=float, default=20)
    s = sub.add_parser("send")
    s.add_argument("task")
    s.add_argument("--args", default="[]")
    s.add_argument("--n", type=int, default=1)
    s.add_argument("--queue")
    s.add_argument("--countdown", type=float)
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
    t = sub.add_parser("terminate")
    t.add_argument("task_id")
    t.add_argument("--signal", default="SIGTERM")
    t.add_argument("--timeout", type=float, default=20)
    n = sub.add_parser("canvas")
    n.add_argument("kind", choices=["chain", "chain_failure", "link", "link_error", "chord",
                                    "chord_failure"])
    n.add_argument("--n", type=int, default=4)
    n.add_argument("--timeout", type=float, default=20)
    args = p.parse_args()
    {"call": cmd_call, "send": cmd_send, "collect": cmd_collect, "sweep": cmd_sweep,
     "events": cmd_events, "control": cmd_control, "revoke": cmd_revoke,
     "canvas": cmd_canvas, "terminate": cmd_terminate}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
