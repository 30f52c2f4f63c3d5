#!/usr/bin/python3
"""Regenerates docs/SCALING.md and docs/img/{scaling,pareto}-*.png from warmpool-sim runs: every
workload of WORKLOADS over the seeds (warmpool and every baseline in one run), the KEDA grid, the
sweeps and the cluster what-ifs, in parallel; then fills scripts/templates/SCALING.md.in (the
prose lives there) and draws the plots (Debian python3-matplotlib). The Pareto front, cost at
equal SLO and rule verdicts: scaling_pareto.py; each workload judged at equal service:
scaling_equal_service.py; the population of real functions: scaling_population.py.

Usage: scripts/scaling_report.py --sim build-report/sim/warmpool-sim [--jobs 2]
       [--seeds "1 2 3 4 5"] [--out-dir DIR] [--commit SHA]
(scripts/scaling-report.sh builds warmpool-sim and calls this.)
"""
import argparse
import collections
import concurrent.futures
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import report_template
import scaling_equal_service as equal
import scaling_pareto as pareto
import scaling_plots
import scaling_population as population

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "scripts", "templates", "SCALING.md.in")
# Every workload of the report, one line each: its name (warmpool-sim's --workload for a
# generator), whether the cost-at-equal-SLO target is the bursty (<= 0.7) or the steady one
# (<= 0.95), the hours its timeline plot shows, how many seeds it runs (None: --seeds) and, for
# a real trace, the `warmpool-sim import` arguments ({T} = the trace directory), imported once
# per seed. office, weekly and drift are generated families kept for generalisation checks
# (docs/sim.md); the traces are real (docs/sim.md, "Importing real traces").
Workload = collections.namedtuple("Workload", "kind plot_hours seeds source",
                                  defaults=(None, None))
AZF = ["--format", "azure-functions-2019", "--in", "{T}/azure_functions_2019_fullday/400_inv.csv",
       "--durations", "{T}/azure_functions_2019_fullday/400_run.csv"]
WORKLOADS = {
    "W1": Workload("bursty", 3),
    "W2": Workload("bursty", 48),
    "W3": Workload("steady", 168),
    "W4": Workload("bursty", 8),
    "W5": Workload("steady", 24),
    "office": Workload("bursty", 48, 10),
    "weekly": Workload("bursty", 168, 10),
    "drift": Workload("steady", 168, 10),
    "azf-f952e8b0": Workload("bursty", 8, None, AZF + ["--function", "f952e8b0fa0e"]),
    "azf-b7cab8f7": Workload("bursty", 8, None, AZF + ["--function", "b7cab8f7ff7f"]),
    "azf-ce6d86ef": Workload("bursty", 8, None, AZF + ["--function", "ce6d86ef0da2"]),
    "alibaba-d120": Workload("steady", 24, None, [
        "--format", "alibaba-gpu-2023", "--in", "{T}/alibaba_gpu_v2023/openb_pod_list_default.csv",
        "--start-hour", "2880", "--hours", "24"]),
    "llm-conv": Workload("steady", 2, None, [
        "--format", "azure-llm-2023", "--in", "{T}/azure_llm_2023/AzureLLMInferenceTrace_conv.csv"]),
}
TRACE_DATA = os.environ.get("WARMPOOL_TRACE_DATA",
                            os.path.join(ROOT, "..", "shared", "data", "trace"))

MAX_SEEDS = [None]  # --max-seeds: caps every workload's seeds (quick trial runs)


def seeds_of(w, seeds):
    """The seeds workload w runs: its own count, else the report's."""
    n = WORKLOADS[w].seeds
    out = [str(i) for i in range(1, n + 1)] if n else seeds
    return out[:MAX_SEEDS[0]] if MAX_SEEDS[0] else out


def population_seeds(seeds):
    """The seeds the population of real functions runs: the report's (capped by --max-seeds)."""
    return seeds[:MAX_SEEDS[0]] if MAX_SEEDS[0] else seeds


def available(w):
    """Generated workloads always; a real trace when its data is here."""
    return WORKLOADS[w].source is None or os.path.isdir(TRACE_DATA)


def workload_arg(out_dir, w, s):
    """--workload for one run: the generator's name, or the trace imported for seed s."""
    if population.is_member(w):
        return population.workload_csv(out_dir, w, s)
    return os.path.join(out_dir, f"trace-{w}-{s}.csv") if WORKLOADS[w].source else w
COST_TARGET = {"bursty": 0.7, "steady": 0.95}
POLICIES = ["warmpool", "keda-redis-cd300", "keda-redis-cd60", "keepalive-600",
            "warmpool-prewarm-off", "always-on-1", "always-on-peak", "oracle-durations", "oracle"]
GRID = ["--grid", "keda", "--policies", "keda-ll*"]  # the KEDA grid alone (sim/keda_grid.h)
FAST_WORKLOADS = ("W2", "W4")
CA_WORKLOADS = ("W1", "W2", "W3", "W4", "W5", "office")  # the autoscaler what-if
CA_GRID_WORKLOADS = ("W2", "office")  # ... with the KEDA grid too, for cost at equal SLO
CA_1MIN = ["--cluster", "caUnneededSeconds=60", "--cluster", "caDelayAfterAddSeconds=60"]
NO_TAIL = ["--cluster", "vmBootP95=240", "--cluster", "driverP95=90"]
FAST_NODES = ["--cluster", "vmBootMedian=35", "--cluster", "vmBootP95=60", "--cluster",
              "driverMedian=5", "--cluster", "driverP95=10", "--cluster", "imagePullSeconds=5"]
COMPARED = ["--policies", "warmpool,keda-redis-cd300,oracle"]
NO_DELETION_COST = ["--scaledobject", "podDeletionCost=false"]
# The knobs that trade GPU-h for wait, swept to judge a rule and the arrival-blind oracle at equal
# p95: targetWaitSeconds around the default 450 (1.5 x coldStartSeconds 300), and keepAlive.
def sweep_of(prefix, key, values):
    """(run kind, extra args) per value of one metadata key."""
    return [(f"{prefix}{v}", ["--meta", f"{key}={v}"]) for v in values]


SWEEP = sweep_of("t", "targetWaitSeconds", (375, 525, 600, 750)) + \
    sweep_of("ka", "keepAlive", (300, 900, 1800))
SWEPT = ["--policies", "warmpool,warmpool-prewarm-off,oracle-durations"]
# The arrival-blind oracle's lean rule asks for fewer replicas than warmpool's at the same
# drainSeconds, so its sweep also goes below warmpool's, down to a drain of 1 s (one slot per task
# as soon as it is queued: the fastest it can be without predicting arrivals).
ORACLE_SWEEP = sweep_of("t", "targetWaitSeconds", (301, 310, 330, 350))


# ---- runs ----------------------------------------------------------------------------------------
def job_list(seeds):
    """(kind, workload, seed, extra args) for every run of the report."""
    jobs = []
    for w in filter(available, WORKLOADS):
        for s in seeds_of(w, seeds):
            # Seed 1 also records a timeline (60 s) for the plots.
            jobs.append(("base", w, s, ["--timeline", "60"] if s == "1" else []))
            # What-if: the cluster autoscaler removes empty nodes after 1 min instead of 10 (AKS
            # autoscaler profile scale-down-unneeded-time=1m, scale-down-delay-after-add=1m).
            if w in CA_WORKLOADS:
                jobs.append(("ca1m", w, s, CA_1MIN))
            if w in CA_GRID_WORKLOADS:
                jobs.append(("ca1mgrid", w, s, CA_1MIN + GRID))
            # The KEDA baselines as SREs configure them, to judge warmpool at equal service.
            jobs.append(("grid", w, s, GRID))
            # The time-of-day forecast acting (the default runs it in shadow mode).
            jobs.append(("forecast", w, s, ["--meta", "forecast=on", "--policies", "warmpool"]))
            # The worker without --pod-deletion-cost: the ReplicaSet blind to busy pods.
            jobs.append(("nopdc", w, s, NO_DELETION_COST + ["--policies", "warmpool"]))
            jobs += [(kind, w, s, meta + SWEPT) for kind, meta in SWEEP]
            jobs += [(kind, w, s, meta + ["--policies", "oracle-durations"])
                     for kind, meta in ORACLE_SWEEP]
    for s in seeds:
        # What-if: boot times without their tail, every policy alike.
        jobs.append(("notail", "W2", s, NO_TAIL + COMPARED))
        # What-if: fast GPU nodes (standby VMs, driver and image on the node).
        for w in FAST_WORKLOADS:
            jobs.append(("fast", w, s, FAST_NODES + COMPARED))
    return jobs


def run_path(out_dir, kind, w, s):
    return os.path.join(out_dir, f"{kind}-{w}-{s}.json")


def import_traces(sim, out_dir, seeds):
    """Imports every real trace of WORKLOADS once per seed (the seed spreads per-minute counts and
    draws durations), when the trace data is here."""
    for w in filter(available, WORKLOADS):
        source = WORKLOADS[w].source
        if not source:
            continue
        for s in seeds_of(w, seeds):
            args = [a.replace("{T}", TRACE_DATA) for a in source]
            subprocess.run([sim, "import"] + args + ["--seed", s, "--out",
                                                     workload_arg(out_dir, w, s)],
                           check=True, stderr=subprocess.DEVNULL)


def stated_jobs(sim, out_dir, seeds):
    """warmpool told each workload's mean task duration (`taskSeconds`, every other key at its
    default) on each seed: what a first burst's unknown durations cost against the arrival-blind
    oracle, which knows them. A generated workload is written out to take its mean."""
    jobs = []
    for w in filter(available, WORKLOADS):
        for s in seeds_of(w, seeds):
            path = workload_arg(out_dir, w, s)
            if not WORKLOADS[w].source:
                path = os.path.join(out_dir, f"generated-{w}-{s}.csv")
                with open(path, "w") as f:
                    subprocess.run([sim, "generate", "--workload", w, "--seed", s], stdout=f,
                                   check=True)
            stated = max(population.mean_duration(path), 0.001)  # taskSeconds > 0
            jobs.append(("stated", w, s, ["--policies", "warmpool",
                                          "--meta", f"taskSeconds={stated:.6g}"]))
    return jobs


def run_all(sim, out_dir, seeds, parallel, resume=False):
    import_traces(sim, out_dir, seeds)
    jobs = job_list(seeds) + stated_jobs(sim, out_dir, seeds)
    members = population.import_all(sim, out_dir, TRACE_DATA, AZF, population_seeds(seeds))
    jobs += population.jobs(members, SWEEP, GRID, out_dir, population_seeds(seeds))
    jobs += population.held_out_jobs(sim, out_dir, TRACE_DATA, AZF, GRID, population_seeds(seeds))
    # Longest runs (W3, then W5) first so the parallel runs finish together.
    order = {"W3": 0, "weekly": 0, "drift": 0, "W5": 1, "office": 1, "W2": 2, "W4": 3, "W1": 4}
    jobs.sort(key=lambda j: (order.get(j[1], 2), j[0] != "grid"))
    run_jobs(sim, out_dir, out_dir, jobs, parallel, resume)


def run_jobs(sim, workload_dir, out_dir, jobs, parallel, resume=False):
    """Runs (kind, workload, seed, extra args) jobs on `parallel` threads, the workloads imported
    in workload_dir, each run's JSON written to its run_path in out_dir (with resume, a run whose
    JSON is there is kept)."""
    def run(job):
        kind, w, s, extra = job
        out = run_path(out_dir, kind, w, s)
        if resume and os.path.exists(out):
            return
        args = [sim, "run", "--workload", workload_arg(workload_dir, w, s), "--seed", s,
                "--format", "json"] + extra
        with open(out + ".tmp", "w") as f:
            subprocess.run(args, stdout=f, check=True)
        os.replace(out + ".tmp", out)

    with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
        for future in [pool.submit(run, j) for j in jobs]:
            future.result()  # raises CalledProcessError for a failed run


# ---- figures -------------------------------------------------------------------------------------
class Runs:
    """The raw JSON results of one report, by run kind and workload."""

    def __init__(self, out_dir, seeds):
        self.out_dir, self.seeds = out_dir, seeds

    def load(self, kind, w):
        runs = []
        for s in seeds_of(w, self.seeds):
            path = run_path(self.out_dir, kind, w, s)
            if os.path.exists(path):
                with open(path) as f:
                    runs.append(pareto.tag_seeds(json.load(f)))
        return runs

    def by_policy(self, kind, w):
        """policy name -> its result in each seed's run, in seed order."""
        out = {}
        for run in self.load(kind, w):
            for p in run["policies"]:
                out.setdefault(p["policy"], []).append(p)
        return out

    def seed1(self, w):
        """policy name -> its seed-1 base result (with the timeline), or None without seed 1."""
        runs = [r for r in self.load("base", w) if r["seed"] == 1]
        return {p["policy"]: p for p in runs[0]["policies"]} if runs else None


def mmm(values, fmt="{:.1f}"):
    """median (min–max), or the one value when they agree."""
    if not values:
        return "-"
    lo, med, hi = min(values), statistics.median(values), max(values)
    if lo == hi:
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(lo)}–{fmt.format(hi)})"


def field(pols, name, key):
    return [p[key] for p in pols[name]]


def saving(pols, a="warmpool", b="keda-redis-cd300"):
    return [1 - x["billedGpuHours"] / y["billedGpuHours"] for x, y in zip(pols[a], pols[b])]


def p95_delta(pols, a="warmpool", b="keda-redis-cd300"):
    return [x["waitP95"] - y["waitP95"] for x, y in zip(pols[a], pols[b])]


def ratio(pols, a="warmpool", b="oracle"):
    return [x["billedGpuHours"] / y["billedGpuHours"] for x, y in zip(pols[a], pols[b])]


def verdict(ok):
    return "**met**" if ok else "not met"


def pct(values):
    return mmm([100 * x for x in values], "{:.0f}")


def secs(values):
    return mmm(values, "{:+.0f}")


def times(values):
    return mmm(values, "{:.2f}") + "×"


def policy_rows(pols):
    """The per-workload results table: one row per policy."""
    rows = []
    for name in POLICIES:
        ps = pols.get(name)
        if not ps:
            continue
        boot = [p["bootGpuHours"] / p["billedGpuHours"] * 100 for p in ps if p["billedGpuHours"]]
        idle = [p["idleGpuHours"] / p["billedGpuHours"] * 100 for p in ps if p["billedGpuHours"]]
        label = name
        if name.startswith("oracle"):
            label += " (" + ", ".join(sorted({p.get("variant", "") for p in ps})) + ")"
        cells = [label, mmm([p["billedGpuHours"] for p in ps]),
                 mmm([p["billedDollars"] for p in ps], "{:.0f}"),
                 mmm(boot, "{:.0f}") + " %", mmm(idle, "{:.0f}") + " %"]
        cells += [mmm([p.get(k, 0) for p in ps], "{:.0f}")
                  for k in ("waitP50", "waitP95", "waitP99", "coldStarts", "killedTasks",
                            "requeuedTasks")]
        cells.append(mmm([p["reversalsPerHour"] for p in ps], "{:.2f}"))
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def ca_rows(base, ca1m, ca_grid):
    """GPU-h of warmpool, the oracle and KEDA, with the default and the 1-minute autoscaler, and
    cost at equal SLO with the latter where its grid ran."""
    rows = []
    for w in WORKLOADS:
        b, c = base[w], ca1m[w]
        if not c:
            continue
        points = list(pareto.grid_points(ca_grid[w]).values())
        cost = pareto.cost_at_equal_slo(pareto.summarize(c)["warmpool"], points)[0] if points \
            else None
        cells = [w] + [mmm(field(b, n, "billedGpuHours"))
                       for n in ("warmpool", "oracle", "keda-redis-cd300")]
        cells += [mmm(field(c, n, "billedGpuHours"))
                  for n in ("warmpool", "oracle", "keda-redis-cd300")]
        cells += [pct(saving(c)) + " %", "-" if cost is None else f"{cost:.2f}"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def deletion_cost_rows(runs, base):
    """warmpool with the worker's --pod-deletion-cost (as shipped) against without it, on the
    workloads where it changes anything; and the names of the others."""
    rows, same = [], []
    for w in WORKLOADS:
        off = runs.by_policy("nopdc", w).get("warmpool")
        on = base[w].get("warmpool")
        if not off or not on:
            continue
        if all(a["billedGpuHours"] == b["billedGpuHours"] and a["waitP95"] == b["waitP95"]
               for a, b in zip(on, off)):
            same.append(w)
            continue
        gpuh = [a["billedGpuHours"] / b["billedGpuHours"] for a, b in zip(on, off)]
        p95 = [a["waitP95"] - b["waitP95"] for a, b in zip(on, off)]
        cells = [w]
        for ps in (on, off):
            cells += [mmm([p["billedGpuHours"] for p in ps]),
                      mmm([p["waitP95"] for p in ps], "{:.0f}")]
        cells += [times(gpuh), secs(p95)]
        rows.append("  | " + " | ".join(cells) + " |")  # inside a list item
    return "\n".join(rows), ", ".join(same) or "none"


def what_ifs(runs, base):
    """The cluster what-ifs: boots without their tail on W2, fast GPU nodes on W2 and W4."""
    v = {}
    notail = runs.by_policy("notail", "W2")
    v["notail_p95"] = secs(p95_delta(notail))
    v["notail_saving"] = pct(saving(notail))
    v["base_w2_p95"] = secs(p95_delta(base["W2"]))
    fast = {w: runs.by_policy("fast", w) for w in FAST_WORKLOADS}
    for w in FAST_WORKLOADS:
        v[f"fast_{w}"] = (f"{pct(saving(fast[w]))} % | {secs(p95_delta(fast[w]))} s "
                          f"| {times(ratio(fast[w]))}")
    return v


def prewarm_rows(runs, base):
    """Per workload: warmpool as shipped (learned pre-warm on, forecast in shadow), without the
    learned pre-warm, and with the forecast acting; each rule judged at equal p95 against the
    policy without it swept over targetWaitSeconds and keepAlive (scaling_pareto.rule_verdict).
    Returns the table's rows, the verdict counts and the (workload, GPU-h ratio) the learned
    pre-warm loses on."""
    rows, gains, losses = [], collections.Counter(), []
    for w in WORKLOADS:
        b = base[w]
        fc = runs.by_policy("forecast", w).get("warmpool")
        if not b or "warmpool-prewarm-off" not in b or not fc:
            continue
        pts = pareto.summarize({"warmpool": b["warmpool"], "off": b["warmpool-prewarm-off"],
                                "forecast": fc})

        def cell(ps):
            return (f"{mmm([p['billedGpuHours'] for p in ps])} / "
                    f"{mmm([p['waitP95'] for p in ps], '{:.0f}')}")
        def of(kind):
            return runs.by_policy(kind, w)
        g_hist = pareto.rule_verdict(pts["warmpool"], pts["off"],
                                     pareto.swept(of, "warmpool-prewarm-off", SWEEP))
        g_fc = pareto.rule_verdict(pts["forecast"], pts["warmpool"],
                                   pareto.swept(of, "warmpool", SWEEP))
        gains["histogram " + g_hist[0]] += 1
        gains["forecast " + g_fc[0]] += 1
        if g_hist[0] == "loss":
            losses.append((w, g_hist[1]))
        rows.append(f"| {w} | {cell(b['warmpool'])} | {cell(b['warmpool-prewarm-off'])} "
                    f"| {pareto.rule_text(*g_hist)} | {cell(fc)} | {pareto.rule_text(*g_fc)} |")
    return "\n".join(rows), gains, losses


RESULTS_HEADER = ("| policy | GPU-h | $ | boot | idle | wait p50 | wait p95 | wait p99 | cold "
                  "| killed | requeued | reversals/h |\n"
                  "|---|---|---|---|---|---|---|---|---|---|---|---|")


def results_sections(base):
    """One "### W" section per workload: its timeline plot and its per-policy table."""
    out = []
    for w in WORKLOADS:
        if not base[w]:
            continue
        out.append(f"### {w}\n\n![{w}](img/scaling-{w}.png)\n\n{RESULTS_HEADER}\n"
                   f"{policy_rows(base[w])}\n")
    return "\n".join(out)


# ---- judged at equal service (issue 21) ----------------------------------------------------------
def equal_service_targets(es, base):
    """The Targets (issue 21) table: one row per workload."""
    rows = []
    for w, e in es.items():
        kind = WORKLOADS[w].kind
        target = COST_TARGET[kind]
        cost = (equal.cost_text(e) if e["ratio"] is None else
                f"{e['ratio']:.2f} ({verdict(e['ratio'] <= target)})")
        cost += "" if e["ratio"] is None else "; bounds: " + ", ".join(
            f"{name} {'-' if b is None else f'{b:.2f}'}"
            for name, b in (("oracle-durations", e["od-bound"]), ("oracle", e["oracle-bound"])))
        orc = "; at warmpool's p95: ".join(
            "-" if r is None else f"{r:.2f}× ({verdict(r <= equal.ORACLE_DURATIONS_TARGET)})"
            for r in (equal.oracle_ratio(e), equal.oracle_ratio(e, "od-at-p95")))
        dom = equal.dominating_text(e, 3)
        kills = field(base[w], "warmpool", "killedTasks")
        rev = field(base[w], "warmpool", "reversalsPerHour")
        rows.append(f"| {w} | {kind} (≤ {target}) | {cost} | {dom} ({verdict(not e['dominating'])}) "
                    f"| {orc} | {mmm(kills, '{:.0f}')} ({verdict(max(kills) == 0)}) "
                    f"| {mmm(rev, '{:.2f}')} ({verdict(max(rev) <= 2)}) |")
    return "\n".join(rows)


def cluster_values(cluster):
    return {"price": f"{cluster['pricePerNodeHour']}",
            "gpus_per_node": f"{cluster['gpusPerNode']}",
            "max_nodes": f"{cluster['maxNodes']}",
            "vm_boot_median": f"{cluster['vmBootMedian']:.0f}",
            "vm_boot_p95": f"{cluster['vmBootP95']:.0f}",
            "driver_median": f"{cluster['driverMedian']:.0f}",
            "image_pull": f"{cluster['imagePullSeconds']:.0f}",
            "ca_unneeded": f"{cluster['caUnneededSeconds']}",
            "ca_delay_after_add": f"{cluster['caDelayAfterAddSeconds']}",
            "ca_gpu_buffer": f"{cluster['caGpuBufferSeconds']}"}


def figures(runs, commit, es):
    """Every value the template names (es: equal_service of the same runs)."""
    base = {w: runs.by_policy("base", w) for w in WORKLOADS}
    ca1m = {w: runs.by_policy("ca1m", w) for w in WORKLOADS}
    own = sorted({WORKLOADS[w].seeds for w in WORKLOADS if WORKLOADS[w].seeds})
    v = {"commit": commit, "seeds_list": ", ".join(runs.seeds), "n_seeds": str(len(runs.seeds)),
         "family_seeds": " or ".join(f"1–{n}" for n in own),
         "families": ", ".join(w for w in WORKLOADS if WORKLOADS[w].seeds),
         "ca_rows": ca_rows(base, ca1m, {w: runs.by_policy("ca1mgrid", w) for w in WORKLOADS})}
    v["results_sections"] = results_sections(base)
    v["equal_service_sections"] = equal.equal_service_sections(es)
    v["equal_service_targets"] = equal_service_targets(es, base)
    v["oracle_bound_rows"] = equal.oracle_bound_rows(es, runs)
    for w in ("office", "weekly"):  # the bounds the prose cites
        for key, name in (("od-bound", "bound"), ("oracle-bound", "oracle_bound")):
            b = es.get(w, {}).get(key)
            v[f"{name}_{w}"] = "-" if b is None else f"{b:.2f}×"
    v.update(cluster_values(runs.load("base", "W1")[0]["cluster"]))
    v.update(what_ifs(runs, base))
    v["deletion_cost_rows"], v["deletion_cost_same"] = deletion_cost_rows(runs, base)
    v["prewarm_rows"], gains, losses = prewarm_rows(runs, base)
    v.update({f"{rule}_{k}": str(gains[f"{rule} {verdict}"]) for rule in ("histogram", "forecast")
              for k, verdict in (("gains", "gain"), ("losses", "loss"))})
    if losses:
        v["histogram_loss_names"] = "; ".join(f"{w}, {r:.2f}×" for w, r in losses)
    if "office" in (w for w, _ in losses):  # its cause is measured (the template says how)
        v["histogram_loses_office"] = "1"
    members = population.members(TRACE_DATA)
    pop_seeds = population_seeds(runs.seeds)
    counts, judged = population.summary(runs.out_dir, members, SWEEP, run_path, pop_seeds)
    if judged:
        total, p95 = population.totals(judged)
        v.update({"pop_n": str(len(judged)), "pop_rows": population.table(judged),
                  "pop_total": f"{total:.3f}×", "pop_p95": f"{p95:+.0f}"})
        v.update({f"pop_{k}": str(counts[k]) for k in ("gain", "same", "loss", "trade")})
    if rows := population.grid_summary(runs.out_dir, members, run_path, pop_seeds):
        v.update(population.grid_values(rows))
        v["pop_grid_patterns"] = str(population.dominated_patterns(runs.out_dir, members,
                                                                   run_path, pop_seeds))
    v.update(population.fixed_values(population.fixed_summary(runs.out_dir, members, run_path,
                                                              seeds=pop_seeds)))
    v.update(population.stated_values(runs.out_dir, members, run_path, seeds=pop_seeds))
    v.update(population.unbudgeted_values(runs.out_dir, members, run_path, "pop", pop_seeds))
    v.update(population.held_out_values(runs.out_dir, TRACE_DATA, run_path, seeds=pop_seeds))
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", required=True, help="the warmpool-sim binary")
    ap.add_argument("--jobs", type=int, default=2, help="runs in parallel")
    ap.add_argument("--seeds", default="1 2 3 4 5", help="space-separated seeds")
    ap.add_argument("--out-dir", help="where the raw JSON goes (default: a temporary dir)")
    ap.add_argument("--docs", default=os.path.join(ROOT, "docs"), help="docs dir to write")
    ap.add_argument("--commit", help="commit named in the report (default: git HEAD)")
    ap.add_argument("--no-run", action="store_true", help="reuse the JSON already in --out-dir")
    ap.add_argument("--max-seeds", type=int, help="run at most this many seeds per workload")
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs whose JSON is already in --out-dir (same binary only)")
    args = ap.parse_args()
    MAX_SEEDS[0] = args.max_seeds
    seeds = args.seeds.split()
    out_dir = args.out_dir or tempfile.mkdtemp()
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(os.path.join(args.docs, "img"), exist_ok=True)
    commit = args.commit
    if commit is None:
        git = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True)
        commit = git.stdout.strip() if git.returncode == 0 else "unknown"
    print(f"warmpool-sim: {args.sim}; raw results in {out_dir}", file=sys.stderr)
    started = time.monotonic()
    if not args.no_run:
        run_all(args.sim, out_dir, seeds, args.jobs, args.resume)
        print(f"simulated in {time.monotonic() - started:.0f} s ({args.jobs} jobs)",
              file=sys.stderr)
    runs = Runs(out_dir, seeds)
    base = {w: runs.by_policy("base", w) for w in WORKLOADS}
    es = equal.equal_service(base, {w: runs.by_policy("grid", w) for w in WORKLOADS},
                       {w: pareto.swept(functools.partial(runs.by_policy, w=w),
                                        "oracle-durations", SWEEP + ORACLE_SWEEP)
                        for w in WORKLOADS})
    scaling_plots.plot(runs, os.path.join(args.docs, "img"), WORKLOADS)
    scaling_plots.plot_pareto(es, os.path.join(args.docs, "img"))
    with open(TEMPLATE) as f:
        text = report_template.render(f.read(), figures(runs, commit, es))
    out = os.path.join(args.docs, "SCALING.md")
    with open(out, "w") as f:
        f.write(text)
    print(f"wrote {out}, docs/img/scaling-W*.png and pareto-W*.png", file=sys.stderr)


if __name__ == "__main__":
    main()
