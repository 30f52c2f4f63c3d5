"""What the fault suite judges at the end. Each check returns (figures, problems): figures for
the summary, problems as one line each (empty = the property held)."""
import collections
import json

QUEUE_LISTS_SUFFIX = "\x06\x16"  # kombu's priority sub-lists: queue + "\x06\x16" + level


def read_executions(path):
    """{task id: [(hostname, pid, wall time), ...]} from the tasks' execution log."""
    runs = collections.defaultdict(list)
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 4:
                    runs[parts[0]].append((parts[1], int(parts[2]), float(parts[3])))
    except FileNotFoundError:
        pass
    return runs


def check_results(app, plan, timeout):
    """Every task has a SUCCESS result with its own return value, read by AsyncResult.get()."""
    problems, states = [], collections.Counter()
    for task_id, seconds, _ in plan:
        result = app.AsyncResult(task_id)
        try:
            value = result.get(timeout=timeout, propagate=True)
            state = result.state
        except Exception as e:  # a missing or failed result is the finding, whatever the class
            state = "%s(%s)" % (result.state, type(e).__name__)
            value = None
        states[state] += 1
        if state != "SUCCESS" or value != seconds:
            problems.append("task %s: result %s value %r, expected SUCCESS %r"
                            % (task_id, state, value, seconds))
    return dict(states), problems


def check_executions(plan, runs, kills, strict):
    """Each task ran at least once; a task ran k > 1 times only if it was in flight at k - 1
    SIGKILLs or more (at-least-once: a killed delivery is redone, nothing else is). `strict`
    (warmpool workers) counts only the SIGKILLs of the worker that held it, read from the
    victim's own in-flight set; otherwise any SIGKILL while it was in `unacked` counts."""
    problems, duplicates = [], []
    in_flight_at = collections.defaultdict(list)
    for k in kills:
        for task_id in k["in_flight"]:
            in_flight_at[task_id].append(k)
    excused = (lambda task_id, at: sum(1 for k in at if task_id in k["victim_held"])) if strict \
        else (lambda task_id, at: len(at))
    never = 0
    for task_id, _, _ in plan:
        n = len(runs.get(task_id, []))
        if n == 0:
            never += 1
            problems.append("task %s never executed" % task_id)
            continue
        if n == 1:
            continue
        at = in_flight_at.get(task_id, [])
        entry = {"id": task_id, "executions": n,
                 "runs": [{"host": h, "pid": p} for h, p, _ in runs[task_id]],
                 "in_flight_at_sigkill": [{"at": k["at"], "host": k["hostname"],
                                           "victim_held": task_id in k["victim_held"]}
                                          for k in at]}
        duplicates.append(entry)
        entry["excused"] = excused(task_id, at)
        if n - 1 > entry["excused"]:
            problems.append("task %s executed %d times but held at %d SIGKILL(s): %s"
                            % (task_id, n, entry["excused"], json.dumps(entry)))
    unknown = set(runs) - {t for t, _, _ in plan}
    for task_id in sorted(unknown):
        problems.append("execution of a task never sent: %s" % task_id)
    figures = {"executions": sum(len(v) for v in runs.values()), "never_executed": never,
               "duplicated_tasks": len(duplicates),
               "duplicates_explained": sum(1 for d in duplicates
                                           if d["executions"] - 1 <= d["excused"]),
               "duplicates_victim_held": sum(1 for d in duplicates
                                             if any(k["victim_held"]
                                                    for k in d["in_flight_at_sigkill"]))}
    return figures, duplicates, problems


def check_leftovers(r, queue):
    """Nothing left in the queue (and its priority sub-lists), unacked, unacked_index, the
    workers' in-flight sets or the dead-letter list."""
    problems, seen = [], {}
    for key in r.scan_iter(count=1000):
        name = key.decode(errors="replace")
        if name.startswith("celery-task-meta-") or name.startswith("_kombu.binding."):
            continue
        kind = r.type(key).decode()
        size = {"list": r.llen, "hash": r.hlen, "zset": r.zcard, "set": r.scard}.get(
            kind, lambda k: 1)(key)
        seen[repr(name)] = (kind, size)
        if name in (queue, "unacked", "unacked_index") or \
                name.startswith(queue + QUEUE_LISTS_SUFFIX) or \
                name.startswith("warmpool.inflight.") or name == "warmpool.deadletter":
            if size:
                problems.append("left in %r (%s): %d entries" % (name, kind, size))
    return seen, problems


def _period_of(t, outages):
    """'down' inside [exit, respawn] of an outage, 'edge' in its shutdown or load phase or in
    the 2 s after it answered again, else 'up'."""
    for o in outages:
        if o["t_dead"] <= t <= o["t_spawn"]:
            return "down"
        if o["t_stop"] <= t <= o["t_ready"] + 2.0:
            return "edge"
    return "up"


def check_scaler(samples, outages, t_first_ok):
    """(1) an answer is never below the tasks in flight during its whole RPC; (2) every RPC that
    began and ended while no redis-server ran is UNAVAILABLE; (3) numbers again within 2 s of
    Redis answering PING, and (4) nothing but numbers while Redis is up."""
    problems = []
    codes = collections.Counter(s.code for s in samples)
    judged_in_flight = below = floor_total = 0
    for s in samples:
        if s.ok and s.before is not None and s.after is not None:
            judged_in_flight += 1
            floor = len(s.before & s.after)  # deliveries (tag, time) in flight throughout
            floor_total += floor
            if s.value < floor:
                below += 1
                problems.append("scaler answered %d at t=%.3f with %d tasks in flight throughout"
                                % (s.value, s.t0, floor))
    if judged_in_flight and not floor_total:
        problems.append("no scaler RPC had a task in flight throughout: check (1) judged nothing")
    recoveries, inside_total = [], 0
    for o in outages:
        inside = [s for s in samples if s.t0 >= o["t_dead"] and s.t1 <= o["t_spawn"]]
        inside_total += len(inside)
        if not inside:
            problems.append("no scaler RPC fell inside the outage %.3f..%.3f" %
                            (o["t_dead"], o["t_spawn"]))
        for s in inside:
            if s.code != "UNAVAILABLE":
                problems.append("during the Redis outage the scaler answered %s (%s) at t=%.3f"
                                % (s.code, s.value, s.t0))
        after = [s for s in samples if s.t0 >= o["t_ready"] and s.ok]
        if not after:
            problems.append("the scaler never answered after Redis came back")
            continue
        recovery = after[0].t1 - o["t_ready"]
        recoveries.append(recovery)
        if recovery > 2.0:
            problems.append("the scaler took %.3f s (> 2 s) to answer after Redis came back"
                            % recovery)
    up_failures = [s for s in samples if s.t0 >= t_first_ok and not s.ok and
                   _period_of(s.t0, outages) == "up" and _period_of(s.t1, outages) == "up"]
    for s in up_failures[:10]:
        problems.append("scaler answered %s at t=%.3f while Redis was up" % (s.code, s.t0))
    figures = {"replies": dict(codes), "judged_in_flight": judged_in_flight,
               "mean_floor": round(floor_total / max(judged_in_flight, 1), 2),
               "below_in_flight": below, "outage_replies": inside_total,
               "unavailable_while_up": len(up_failures),
               "max_recovery_s": round(max(recoveries), 3) if recoveries else None,
               "recoveries_s": [round(x, 3) for x in recoveries]}
    return figures, problems
