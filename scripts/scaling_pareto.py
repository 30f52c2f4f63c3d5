"""Judging a policy at equal service: the Pareto front of GPU-hours against p95 wait, and the
cheapest baseline configuration that is no worse. Pure functions, used by scaling_report.py and
tested by tests/unit/sim/scaling_pareto_test.py.

A point is one configuration summarised over the seeds: the median GPU-h, the median p95 wait and
the most tasks it killed on any seed (so "kills nothing" means on no seed). Two points that ran on
the same seeds are compared seed by seed: warmpool-sim draws every policy's node boots and model
loads of one seed from the same streams (common random numbers), so the difference on one seed is
the policies' decisions, and the median of the per-seed differences is the paired comparison of a
common-random-numbers design (Law, *Simulation Modeling and Analysis*, ch. 11). Comparing the two
medians instead can pit one policy's lucky seed against the other's unlucky one: a policy that
waits less on 4 seeds of 5 can have the longer median p95.
"""
import collections
import re
import statistics

# seeds: ((seed, GPU-h, p95), ...) by seed, or None when the runs carry no seed (compared by their
# medians alone); reversals: the median scaling reversals per hour, None when not reported.
Point = collections.namedtuple("Point", "name gpuh p95 killed seeds reversals",
                               defaults=(None, None))


def grid_key(name):
    """The configuration a grid policy name stands for on every seed: the long grace and the cron
    floor follow each seed's own workload (its longest task, its office-hours load), so
    `keda-ll5-cd60-pi30-g660-cron58` is `keda-ll5-cd60-pi30-glongest-cron`; other names stay."""
    name = re.sub(r"-g(\d+)(?=-|$)", lambda m: m.group(0) if m.group(1) == "30" else "-glongest",
                  name)
    return re.sub(r"-cron\d+$", "-cron", name)


def summarize(by_policy, key=lambda name: name):
    """{policy: [result per seed]} (warmpool-sim's JSON fields) -> {key(policy): Point}, the runs
    of the policies with the same key pooled."""
    pooled = collections.defaultdict(list)
    for name, runs in by_policy.items():
        pooled[key(name)].extend(runs)
    out = {}
    for name, runs in pooled.items():
        if not runs:
            continue
        seeds = None
        if all("seed" in r for r in runs) and len({r["seed"] for r in runs}) == len(runs):
            seeds = tuple(sorted((r["seed"], r["billedGpuHours"], r["waitP95"]) for r in runs))
        reversals = None
        if all("reversalsPerHour" in r for r in runs):
            reversals = statistics.median(r["reversalsPerHour"] for r in runs)
        out[name] = Point(name, statistics.median(r["billedGpuHours"] for r in runs),
                          statistics.median(r["waitP95"] for r in runs),
                          max(r["killedTasks"] for r in runs), seeds, reversals)
    return out


def tag_seeds(run):
    """A warmpool-sim run's JSON with its seed copied into each policy's result, so results of one
    policy pooled over seeds can be paired seed by seed with another's (difference)."""
    for p in run["policies"]:
        p["seed"] = run["seed"]
    return run


def grid_points(by_policy):
    """summarize(by_policy, grid_key) of a grid's runs over the seeds. The grid runs a long grace
    only on the seeds whose workload has a task past 30 s; on the others the `-glongest`
    configuration is the `-g30` one, so its run stands in there and the configuration is compared
    on every seed."""
    pooled = collections.defaultdict(list)
    for name, runs in by_policy.items():
        pooled[grid_key(name)].extend(runs)
    for name, runs in list(pooled.items()):
        short = name.replace("-glongest", "-g30")
        if short == name or short not in pooled:
            continue
        have = {r.get("seed") for r in runs}
        runs.extend(r for r in pooled[short] if r.get("seed") not in have)
    return summarize(pooled)


def _paired(a, b):
    """The per-seed (a, b) pairs of (GPU-h, p95) when both ran on the same seeds, else None."""
    if not a.seeds or not b.seeds or [s[0] for s in a.seeds] != [s[0] for s in b.seeds]:
        return None
    return [(x[1:], y[1:]) for x, y in zip(a.seeds, b.seeds)]


def difference(a, b):
    """(GPU-h, p95) of a minus b: the median of the per-seed differences when both ran on the same
    seeds, else the difference of the medians."""
    pairs = _paired(a, b)
    if pairs is None:
        return a.gpuh - b.gpuh, a.p95 - b.p95
    return (statistics.median(x[0] - y[0] for x, y in pairs),
            statistics.median(x[1] - y[1] for x, y in pairs))


def gpuh_ratio(a, b):
    """a's GPU-h / b's: the median of the per-seed ratios when both ran on the same seeds."""
    pairs = _paired(a, b)
    if pairs is None:
        return a.gpuh / b.gpuh
    return statistics.median(x[0] / y[0] for x, y in pairs)


def no_slower(a, b):
    """a's p95 wait is no worse than b's (paired, see difference)."""
    return difference(a, b)[1] <= 0


def dominates(a, b):
    """a is no worse than b on GPU-h, p95 and kills, and better on at least one (GPU-h and p95
    paired by seed, see difference)."""
    dg, dp = difference(a, b)
    no_worse = dg <= 0 and dp <= 0 and a.killed <= b.killed
    return no_worse and (dg < 0 or dp < 0 or a.killed < b.killed)


def pareto_front(points):
    """The points that kill nothing and that no other such point dominates, by GPU-h."""
    clean = [p for p in points if p.killed == 0]
    front = [p for p in clean if not any(dominates(q, p) for q in clean)]
    return sorted(front, key=lambda p: (p.gpuh, p.p95, p.name))


def cheapest_at_slo(points, policy):
    """The cheapest point that kills nothing and waits no longer at p95 than policy (a Point,
    paired by seed), or None."""
    ok = [p for p in points if p.killed == 0 and no_slower(p, policy)]
    return min(ok, key=lambda p: (p.gpuh, p.p95, p.name)) if ok else None


def cost_at_equal_slo(policy, points):
    """(policy GPU-h / the cheapest no-worse point's GPU-h (gpuh_ratio), that point), or
    (None, None)."""
    best = cheapest_at_slo(points, policy)
    if best is None:
        return None, None
    return gpuh_ratio(policy, best), best


def dominating(policy, points):
    """The points that dominate policy (no more GPU-h, no worse p95, no more kills, better on
    one), cheapest first."""
    return sorted((p for p in points if dominates(p, policy)), key=lambda p: (p.gpuh, p.p95))


def setting_of(point):
    """The swept setting a Point stands for (swept names it "policy, setting"), or None for the
    shipped settings."""
    return point.name.split(", ", 1)[1] if point and ", " in point.name else None


def swept(by_policy_of, name, sweep):
    """name's Point at each setting of a sweep [(run kind, ["--meta", "key=value"])] that has it;
    by_policy_of(kind) = {policy: [result per seed]} of that kind's runs. Named "name, `key
    value`" (rule_text shows the setting)."""
    out = []
    for kind, meta in sweep:
        runs = by_policy_of(kind).get(name)
        label = f"{name}, `{meta[1].replace('=', ' ')}`"
        if runs:
            out.append(summarize({label: runs})[label])
    return out


def rule_verdict(on, off, off_settings):
    """A rule judged at equal p95: on = the policy with the rule (a Point), off = the policy
    without it at the same settings, off_settings = the policy without it at the other settings
    of a sweep (the knobs that trade GPU-h for wait). Returns (verdict, ratio, point):
    "same" when on and off are within 0.5 % on both axes; else ratio = on's GPU-h / that of the
    cheapest off setting whose p95 is no worse than on's (point): "gain" below 0.995, "loss"
    above 1.005, "same" between; when no off setting is as fast as on, against the fastest one:
    "gain" when on bills no more, else "trade" (faster, dearer)."""
    dg, dp = difference(on, off)
    if abs(dg) <= 0.005 * off.gpuh and abs(dp) <= 0.005 * max(off.p95, 1):
        return "same", 1.0, off
    settings = [off] + list(off_settings)
    ratio, best = cost_at_equal_slo(on, settings)
    if best is not None:
        return ("gain" if ratio < 0.995 else "loss" if ratio > 1.005 else "same"), ratio, best
    fastest = min((p for p in settings if p.killed == 0), key=lambda p: (p.p95, p.gpuh),
                  default=None)
    if fastest is None:
        return "gain", None, None
    ratio = gpuh_ratio(on, fastest)
    return ("gain" if difference(on, fastest)[0] <= 0 else "trade"), ratio, fastest


def rule_text(verdict, ratio, best):
    """A rule's verdict with its GPU-h ratio and the off setting it was judged against (swept
    Points are named "policy, setting"; the others stand for the shipped settings)."""
    setting = setting_of(best)
    if verdict == "same" and setting is None:
        return "same"
    text = "**gain**" if verdict == "gain" else verdict
    if ratio is None:
        return text
    against = "against the fastest off" if verdict == "trade" else "at equal p95"
    return f"{text} ({ratio:.2f}× GPU-h {against}: off with {setting or 'the shipped settings'})"
