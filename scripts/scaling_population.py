"""A population of real functions, for scaling_report.py: every function of the Azure Functions
2019 day (Shahrad et al., ATC 2020) with 8 to 20,000 invocations in the import window (the first
8 hours), chosen by that rule alone, imported once per seed (the seed spreads the per-minute counts
and draws the durations, as for the report's real traces). On each, warmpool's default is judged
at equal service against the KEDA grid over the same seeds, paired by seed as on the report's
workloads (scaling_pareto.difference), and the learned pre-warm is
run with and without, judged at equal p95 against the policy without it swept over the same
settings as the report's workloads (scaling_pareto.rule_verdict). Each grid configuration is
also judged set once for every function, as a team sets one ScaledObject for all its queues,
against warmpool's default set once (fixed_summary). warmpool without its release budget
(`releasesPerHour: off`) is judged against the grid too, to measure what the reversal bound changes
in the dominance count (unbudgeted_values).

The rest of the day is held out: the functions the same rule picks in each later 8-hour window
(HELD_OUT_HOURS), imported from that window, judged against the grid the same way
(held_out_values). No setting of the policy was developed on them, so they check whether what
holds on the first window holds on data nobody looked at.
"""
import collections
import csv
import json
import os
import statistics
import subprocess

import scaling_pareto as pareto

PREFIX = "azfpop-"
MIN_CALLS, MAX_CALLS, WINDOW_MINUTES = 8, 20000, 8 * 60
HELD_OUT_HOURS = (8, 16)  # the later windows' start hours; their members are "azfNN-<function>"
INVOCATIONS = os.path.join("azure_functions_2019_fullday", "400_inv.csv")


def member_prefix(start_hour=0):
    """The member prefix of the window starting `start_hour` hours into the day: PREFIX for the
    population's own window, "azfNN-" for a held-out one."""
    return f"azf{start_hour:02d}-" if start_hour else PREFIX


def is_member(w):
    """w names a function of the population or of a held-out window."""
    return w.startswith(tuple(member_prefix(h) for h in (0,) + HELD_OUT_HOURS))


def function_of(w):
    """The function (HashFunction prefix) of member w."""
    return w.split("-", 1)[1]


def functions(trace_dir, start_hour=0):
    """The 12-character HashFunction prefixes chosen by the rule in the window starting
    `start_hour` hours into the day, in file order ([] without data)."""
    path = os.path.join(trace_dir, INVOCATIONS)
    if not os.path.exists(path):
        return []
    out = []
    with open(path, newline="") as f:
        rows = csv.reader(f)
        first = next(rows).index("minute_1") + start_hour * 60
        for r in rows:
            calls = sum(int(x) for x in r[first:first + WINDOW_MINUTES])
            if MIN_CALLS <= calls <= MAX_CALLS:
                out.append(r[0][:12])
    return out


def members(trace_dir, start_hour=0):
    """The member names (member_prefix + function) of the window starting `start_hour` hours in."""
    return [member_prefix(start_hour) + fn for fn in functions(trace_dir, start_hour)]


def held_out_members(trace_dir):
    """The members of every held-out window."""
    return [w for h in HELD_OUT_HOURS for w in members(trace_dir, h)]


def workload_csv(out_dir, w, s="1"):
    """The CSV of member w (member_prefix + function) imported for seed s."""
    return os.path.join(out_dir, f"trace-{w}-{s}.csv")


def arrival_pattern(out_dir, w, s="1"):
    """The arrival times of member w's import for seed s, or w itself where that import is not
    there: functions of one app often share a timer, so several members can be one pattern."""
    path = workload_csv(out_dir, w, s)
    if not os.path.exists(path):
        return w
    with open(path) as f:
        return tuple(line.split(",", 1)[0] for line in f if line[:1].isdigit())


def import_all(sim, out_dir, trace_dir, azf_args, seeds=("1",), start_hour=0):
    """Imports every function of the population (with start_hour, of the held-out window starting
    then) once per seed; returns the member names."""
    window = ["--start-hour", str(start_hour), "--hours", str(WINDOW_MINUTES // 60)]
    chosen = members(trace_dir, start_hour)
    for w in chosen:
        args = [a.replace("{T}", trace_dir) for a in azf_args] + window
        for s in seeds:
            subprocess.run([sim, "import"] + args + ["--function", function_of(w), "--seed", s,
                                                     "--out", workload_csv(out_dir, w, s)],
                           check=True, stderr=subprocess.DEVNULL)
    return chosen


def mean_duration(csv_path):
    """The mean duration_s of an imported workload CSV (0 without tasks)."""
    with open(csv_path, newline="") as f:
        durations = [float(r["duration_s"])
                     for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    return statistics.mean(durations) if durations else 0.0


def jobs(members, sweep, grid, out_dir, seeds=("1",)):
    """(kind, workload, seed, extra args) for each seed: the rule on and off, the KEDA grid (grid:
    its run arguments), warmpool without the release budget, warmpool told the function's mean
    duration on that seed's import (`taskSeconds`; the imports are in out_dir), then off at each
    swept setting."""
    out = []
    for w in members:
        for s in seeds:
            out += _judged_jobs(w, s, grid)
            stated = max(mean_duration(workload_csv(out_dir, w, s)), 0.001)  # taskSeconds > 0
            out.append(("stated", w, s, ["--policies", "warmpool",
                                          "--meta", f"taskSeconds={stated:.6g}"]))
            out += [(kind, w, s, meta + ["--policies", "warmpool-prewarm-off"])
                    for kind, meta in sweep]
    return out


def _judged_jobs(w, s, grid):
    """The runs that judge member w on seed s against the grid: warmpool with and without the
    learned pre-warm, the KEDA grid (grid: its run arguments), and warmpool without the release
    budget (what the reversal bound changes: unbudgeted_values)."""
    return [("base", w, s, ["--policies", "warmpool,warmpool-prewarm-off"]), ("grid", w, s, grid),
            ("unbudgeted", w, s, ["--policies", "warmpool", "--meta", "releasesPerHour=off"])]


def held_out_jobs(sim, out_dir, trace_dir, azf_args, grid, seeds=("1",)):
    """Imports every held-out window's functions once per seed (import_all) and returns their
    (kind, workload, seed, extra args) runs: _judged_jobs'."""
    held = [w for h in HELD_OUT_HOURS
            for w in import_all(sim, out_dir, trace_dir, azf_args, seeds, start_hour=h)]
    return [job for w in held for s in seeds for job in _judged_jobs(w, s, grid)]


def _by_policy(out_dir, kind, w, seeds, run_path):
    """{policy: [its result on each seed, tagged with the seed]} of member w's runs of `kind`
    ({} when a seed's run is missing: a member is judged on all the seeds or not at all)."""
    out = {}
    for s in seeds:
        path = run_path(out_dir, kind, w, s)
        if not os.path.exists(path):
            return {}
        with open(path) as f:
            for p in json.load(f)["policies"]:
                out.setdefault(p["policy"], []).append(dict(p, seed=int(s)))
    return out


def summary(out_dir, members, sweep, run_path, seeds=("1",)):
    """(verdict counts, [(member, verdict, ratio, on, off)] of the members judged)."""
    counts, judged = collections.Counter(), []
    for w in members:
        base = pareto.summarize(_by_policy(out_dir, "base", w, seeds, run_path))
        on, off = base.get("warmpool"), base.get("warmpool-prewarm-off")
        if not on or not off:
            continue
        settings = pareto.swept(lambda kind: _by_policy(out_dir, kind, w, seeds, run_path),
                                "warmpool-prewarm-off", sweep)
        verdict, ratio, _ = pareto.rule_verdict(on, off, settings)
        counts[verdict] += 1
        judged.append((function_of(w), verdict, ratio, on, off))
    return counts, judged


# Scaling reversals per hour above which a configuration churns on a function (issue 21's bound).
CHURN_REVERSALS_PER_HOUR = 2


def _churns(point):
    """The point reverses more than CHURN_REVERSALS_PER_HOUR times an hour (median over seeds)."""
    return (point.reversals or 0) > CHURN_REVERSALS_PER_HOUR


def _with_grid(out_dir, members, run_path, seeds, grid_dir=None):
    """(member, {policy: Point} of its base runs, {configuration: Point} of its grid runs) for the
    members whose warmpool and grid runs are there on every seed (the grid's in grid_dir, default
    out_dir)."""
    for w in members:
        base = pareto.summarize(_by_policy(out_dir, "base", w, seeds, run_path))
        grid = _by_policy(grid_dir or out_dir, "grid", w, seeds, run_path)
        if "warmpool" in base and grid:
            yield w, base, pareto.grid_points(grid)


def _wide(point, dominating, margin):
    """Some of the points dominating `point` bill less than its GPU-h by more than `margin`."""
    return any(pareto.gpuh_ratio(point, q) > 1 + margin for q in dominating)


def grid_summary(out_dir, members, run_path, seeds=("1",), grid_dir=None):
    """[(function, warmpool, cost at equal SLO or None, cheapest dominating config or None,
    warmpool-prewarm-off or None)] of the members whose warmpool and grid runs are there (the
    grid's in grid_dir, default out_dir)."""
    out = []
    for w, base, grid in _with_grid(out_dir, members, run_path, seeds, grid_dir):
        wp, points = base["warmpool"], list(grid.values())
        ratio, _ = pareto.cost_at_equal_slo(wp, points)
        dom = pareto.dominating(wp, points)
        out.append((function_of(w), wp, ratio, min(dom, key=lambda p: p.gpuh) if dom else None,
                    base.get("warmpool-prewarm-off")))
    return out


def dominated_patterns(out_dir, members, run_path, seeds=("1",), grid_dir=None):
    """How many distinct arrival patterns (arrival_pattern, first seed; the imports are where the
    grid runs are) the members a grid configuration dominates warmpool on have."""
    where = grid_dir or out_dir
    return len({arrival_pattern(where, w, seeds[0])
                for w, base, grid in _with_grid(out_dir, members, run_path, seeds, grid_dir)
                if pareto.dominating(base["warmpool"], list(grid.values()))})


def grid_values(rows, margin=0.02):
    """The template's pop_grid_* values from grid_summary's rows; a config dominates by more than
    `margin` when warmpool bills over (1 + margin) times its GPU-h. pop_grid_churning lists the
    functions warmpool reverses on more than CHURN_REVERSALS_PER_HOUR times an hour."""
    ratios = sorted(r[2] for r in rows if r[2] is not None)
    dominated = [r for r in rows if r[3] is not None]
    wide = sorted((r for r in dominated if pareto.gpuh_ratio(r[1], r[3]) > 1 + margin),
                  key=lambda r: -pareto.gpuh_ratio(r[1], r[3]))
    # Dominated ones the learned pre-warm made dearer (it bills over 0.5 % more than without).
    prewarm = sum(1 for r in dominated if r[4] and pareto.gpuh_ratio(r[1], r[4]) > 1.005)
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    # Where warmpool reverses more than the bound of the Targets table (median over the seeds).
    churning = sorted(((r[1].reversals, r[0]) for r in rows if _churns(r[1])), reverse=True)

    def off_cell(off):
        return "-" if off is None else f"{off.gpuh:.2f} / {off.p95:.0f}"

    table = "\n".join(
        f"| `{fn}` | {wp.gpuh:.2f} / {wp.p95:.0f} | `{d.name}` | {d.gpuh:.2f} / {d.p95:.0f} "
        f"| {pareto.gpuh_ratio(wp, d):.2f}× | {off_cell(off)} |"
        for fn, wp, _, d, off in wide) or "| (none) | | | | | |"
    return {"pop_grid_n": str(len(rows)), "pop_grid_as_fast": str(len(ratios)),
            "pop_grid_median": f"{q[1]:.2f}" if ratios else "-",
            "pop_grid_quartiles": f"{q[0]:.2f}–{q[2]:.2f}" if ratios else "-",
            "pop_grid_below_07": str(sum(1 for r in ratios if r <= 0.7)),
            "pop_grid_dominated": str(len(dominated)), "pop_grid_wide": str(len(wide)),
            "pop_grid_prewarm": str(prewarm),
            "pop_grid_churning": ", ".join(f"`{fn}` ({rate:.2f})" for rate, fn in churning)
            or "none",
            "pop_grid_margin": f"{100 * margin:.0f}", "pop_grid_rows": table}


# One function judged with one key changed (its mean duration stated, or the release budget off):
# warmpool told so, as shipped, and the grid configurations that dominate the told one.
_Told = collections.namedtuple("_Told", "name told shipped dominating")


def stated_values(out_dir, members, run_path, margin=0.02, top=3, seeds=("1",)):
    """The template's pop_stated_* values: warmpool told each function's mean duration (run kind
    "stated") against warmpool as shipped, over the members with both runs and a grid run: the
    GPU-h ratio of the sums, the median p95 of each, on how many functions the told one waits
    longer or less at p95, the `top` functions it saves the most GPU-h on, and on how many a grid
    configuration dominates it (by more than `margin` of its GPU-h)."""
    rows = []
    for w, base, grid in _with_grid(out_dir, members, run_path, seeds):
        t = pareto.summarize(_by_policy(out_dir, "stated", w, seeds, run_path)).get("warmpool")
        if t is not None:
            rows.append(_Told(function_of(w), t, base["warmpool"],
                              pareto.dominating(t, list(grid.values()))))
    if not rows:
        return {}
    told_gpuh, shipped_gpuh = sum(r.told.gpuh for r in rows), sum(r.shipped.gpuh for r in rows)
    saved_most = sorted(rows, key=lambda r: (r.told.gpuh - r.shipped.gpuh, r.name))[:top]
    return {"pop_stated_n": str(len(rows)),
            "pop_stated_ratio": f"{told_gpuh / shipped_gpuh:.2f}",
            "pop_stated_p95": f"{statistics.median(r.told.p95 for r in rows):.0f}",
            "pop_stated_shipped_p95": f"{statistics.median(r.shipped.p95 for r in rows):.0f}",
            "pop_stated_slower": str(sum(1 for r in rows
                                         if pareto.difference(r.told, r.shipped)[1] > 0)),
            "pop_stated_faster": str(sum(1 for r in rows
                                         if pareto.difference(r.told, r.shipped)[1] < 0)),
            "pop_stated_top": ", ".join(f"`{r.name}`" for r in saved_most),
            "pop_stated_dominated": str(sum(1 for r in rows if r.dominating)),
            "pop_stated_wide": str(sum(1 for r in rows if _wide(r.told, r.dominating, margin)))}


def unbudgeted_values(out_dir, members, run_path, prefix, seeds=("1",), margin=0.02):
    """The template's <prefix>_unbudgeted_* values: warmpool with `releasesPerHour: off` (run kind
    "unbudgeted", every other key at its default) over the members with that run and a grid run:
    its GPU-h summed over them / warmpool's as shipped, on how many a grid configuration
    dominates it (_dominated) and by more than `margin` of its GPU-h (_wide), and on how many it
    reverses more than CHURN_REVERSALS_PER_HOUR times an hour: what the release budget's holds
    change in the judged figures."""
    rows = []
    for w, base, grid in _with_grid(out_dir, members, run_path, seeds):
        u = pareto.summarize(_by_policy(out_dir, "unbudgeted", w, seeds, run_path)).get("warmpool")
        if u is not None:
            rows.append(_Told(function_of(w), u, base["warmpool"],
                              pareto.dominating(u, list(grid.values()))))
    if not rows:
        return {}
    shipped = sum(r.shipped.gpuh for r in rows)
    return {f"{prefix}_unbudgeted_n": str(len(rows)),
            f"{prefix}_unbudgeted_ratio": f"{sum(r.told.gpuh for r in rows) / shipped:.2f}",
            f"{prefix}_unbudgeted_dominated": str(sum(1 for r in rows if r.dominating)),
            f"{prefix}_unbudgeted_wide": str(sum(1 for r in rows
                                                 if _wide(r.told, r.dominating, margin))),
            f"{prefix}_unbudgeted_churning": str(sum(1 for r in rows if _churns(r.told)))}


def totals(judged):
    """(GPU-h with the rule / without it over the population, median p95 change in seconds)."""
    on, off = sum(j[3].gpuh for j in judged), sum(j[4].gpuh for j in judged)
    return on / off if off else float("nan"), statistics.median(
        pareto.difference(j[3], j[4])[1] for j in judged)


def table(judged, verdicts=("gain", "loss", "trade")):
    """The members whose verdict is not "same", best ratio first."""
    rows = [f"| `{fn}` | {v} | {'-' if r is None else f'{r:.2f}×'} | {on.gpuh:.2f} / {on.p95:.0f} "
            f"| {off.gpuh:.2f} / {off.p95:.0f} |"
            for fn, v, r, on, off in sorted(judged, key=lambda j: (j[2] is None, j[2] or 0))
            if v in verdicts]
    return "\n".join(rows) or "| (none) | | | | |"


FixedConfig = collections.namedtuple(
    "FixedConfig", "name gpuh p95 killing slower dominated wide churning")

def _fixed_candidates(grid_points, base):
    """{configuration: Point} one function runs under each configuration an SRE would set once
    for every function: the grid's `-glongest` is the `-g30` one where no task runs past 30 s
    (the grid then runs no longer grace), plus warmpool with and without the learned pre-warm."""
    out = dict(grid_points)
    for name, p in grid_points.items():
        if name.endswith("-g30") or "-g30-" in name:
            out.setdefault(name.replace("-g30", "-glongest"), p._replace(
                name=name.replace("-g30", "-glongest")))
    for name in ("warmpool", "warmpool-prewarm-off"):
        if name in base:
            out[name] = base[name]
    return out


def fixed_summary(out_dir, members, run_path, margin=0.02, seeds=("1",)):
    """One configuration for the whole population, as a team sets one ScaledObject for all its
    queues: per configuration that every judged function ran (the cron floor only runs where a
    function's window has office hours, so it is left out), [FixedConfig] by total GPU-h: the
    GPU-h summed over the functions, the median of their p95 waits, how many functions it kills
    tasks on, waits longer at p95 than warmpool on, is dominated on by some grid configuration
    picked for that function in hindsight (by more than `margin` of its GPU-h), and scales back
    and forth on more than CHURN_REVERSALS_PER_HOUR times an hour (median over the seeds)."""
    per_config = collections.defaultdict(list)
    judged = 0
    for _, base, grid in _with_grid(out_dir, members, run_path, seeds):
        judged += 1
        for name, p in _fixed_candidates(grid, base).items():
            dom = pareto.dominating(p, list(grid.values()))
            per_config[name].append((p, base["warmpool"], dom))
    rows = []
    for name, runs in per_config.items():
        if len(runs) != judged:
            continue
        rows.append(FixedConfig(
            name, sum(p.gpuh for p, _, _ in runs), statistics.median(p.p95 for p, _, _ in runs),
            sum(1 for p, _, _ in runs if p.killed > 0),
            sum(1 for p, wp, _ in runs if not pareto.no_slower(p, wp)),
            sum(1 for _, _, d in runs if d),
            sum(1 for p, _, d in runs if _wide(p, d, margin)),
            sum(1 for p, _, _ in runs if _churns(p))))
    return sorted(rows, key=lambda r: (r.gpuh, r.p95, r.name))


def _count(n):
    """A count for running text: "none" for 0."""
    return str(n) if n else "none"


def fixed_values(rows, keda_rows=5):
    """The template's pop_fixed_* values from fixed_summary's rows: warmpool's two rows and the
    `keda_rows` cheapest KEDA configurations that kill nothing on any function, the one of them
    with the shortest median p95 and the one dominated on the fewest functions, and
    how the cheapest and the fastest compare."""
    wp = next((r for r in rows if r.name == "warmpool"), None)
    keda = [r for r in rows if r.name.startswith("keda-")]
    clean = [r for r in keda if r.killing == 0]
    if wp is None or not clean:
        return {}
    least = min(clean, key=lambda r: (r.dominated, r.gpuh))
    fastest = min(clean, key=lambda r: (r.p95, r.gpuh))
    shown = [r for r in rows if r.name.startswith("warmpool")] + clean[:keda_rows]
    shown += [r for r in (fastest, least) if r not in shown]
    table = "\n".join(
        f"| `{r.name}` | {r.gpuh:.1f} | {r.gpuh / wp.gpuh:.2f}× | {r.p95:.0f} | {r.slower} "
        f"| {r.killing} | {r.dominated} ({r.wide}) | {r.churning} |"
        for r in sorted(shown, key=lambda r: (r.gpuh, r.name)))
    cheapest = clean[0]
    return {"pop_fixed_n": str(len(keda)), "pop_fixed_rows": table,
            "pop_fixed_cheapest": f"`{cheapest.name}`",
            "pop_fixed_cheapest_ratio": f"{cheapest.gpuh / wp.gpuh:.2f}",
            "pop_fixed_cheapest_p95": f"{cheapest.p95:.0f}",
            "pop_fixed_cheapest_slower": str(cheapest.slower),
            "pop_fixed_fastest": f"`{fastest.name}`",
            "pop_fixed_fastest_ratio": f"{fastest.gpuh / wp.gpuh:.2f}",
            "pop_fixed_fastest_p95": f"{fastest.p95:.0f}",
            "pop_fixed_wp_p95": f"{wp.p95:.0f}",
            "pop_fixed_least": f"`{least.name}`", "pop_fixed_least_dominated": str(least.dominated),
            "pop_fixed_clean": str(len(clean)),
            "pop_fixed_wp_churning": str(wp.churning),
            "pop_fixed_least_churning": str(min(r.churning for r in clean)),
            "pop_fixed_cheaper": _count(sum(1 for r in clean if r.gpuh < wp.gpuh)),
            "pop_fixed_faster": _count(sum(1 for r in clean if r.p95 < wp.p95))}


def held_out_values(out_dir, trace_dir, run_path, seeds=("1",), margin=0.02, top=3):
    """The template's held_* values of the held-out members: grid_values' and fixed_values'
    figures under the held_ prefix, the windows, and the `top` functions a grid configuration
    dominates warmpool on by the widest margin."""
    held = held_out_members(trace_dir)
    rows = grid_summary(out_dir, held, run_path, seeds)
    if not rows:
        return {}
    figures = {**grid_values(rows, margin),
               **fixed_values(fixed_summary(out_dir, held, run_path, margin, seeds)),
               "pop_grid_patterns": str(dominated_patterns(out_dir, held, run_path, seeds))}
    v = {"held_" + k[len("pop_"):]: x for k, x in figures.items()}
    dominated = sorted((pareto.gpuh_ratio(wp, d), fn) for fn, wp, _, d, _ in rows if d)[::-1]
    v["held_top"] = ", ".join(f"`{fn}` ({ratio:.2f}×)" for ratio, fn in dominated[:top]) or "none"
    v.update(unbudgeted_values(out_dir, held, run_path, "held", seeds, margin))
    v["held_windows"] = " and ".join(f"{h}–{h + WINDOW_MINUTES // 60} h" for h in HELD_OUT_HOURS)
    return v
