#!/usr/bin/python3
"""Regenerates docs/SCALING.md and docs/img/scaling-W*.png from warmpool-sim runs.

Runs every workload W1..W5 over the seeds (warmpool and every baseline in the same run), plus
the cluster and ScaledObject what-ifs, in parallel; then fills scripts/templates/SCALING.md.in
with the figures and draws the plots (Debian python3-matplotlib). The prose lives in the
template; this file only runs the simulator and computes the numbers.

Usage: scripts/scaling_report.py --sim build-report/sim/warmpool-sim [--jobs 2]
       [--seeds "1 2 3 4 5"] [--out-dir DIR] [--commit SHA]
(scripts/scaling-report.sh builds warmpool-sim and calls this.)
"""
import argparse
import concurrent.futures
import json
import os
import re
import statistics
import string
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "scripts", "templates", "SCALING.md.in")
WORKLOADS = ["W1", "W2", "W3", "W4", "W5"]
POLICIES = ["warmpool", "keda-redis-cd300", "keda-redis-cd60", "keepalive-600",
            "warmpool-prewarm-off", "always-on-1", "always-on-peak", "oracle"]
WINDOW_H = {"W1": 3, "W2": 48, "W3": 168, "W4": 8, "W5": 24}  # plotted hours
ORACLE_TARGET = {"W1": 1.25, "W3": 1.25, "W4": 1.25, "W2": 1.6}
DRAINS_W1 = (105, 110)
DRAINS = (120, 80, 60)
FAST_WORKLOADS = ("W2", "W4")
CA_1MIN = ["--cluster", "caUnneededSeconds=60", "--cluster", "caDelayAfterAddSeconds=60"]
NO_TAIL = ["--cluster", "vmBootP95=240", "--cluster", "driverP95=90"]
FAST_NODES = ["--cluster", "vmBootMedian=35", "--cluster", "vmBootP95=60", "--cluster",
              "driverMedian=5", "--cluster", "driverP95=10", "--cluster", "imagePullSeconds=5"]
COMPARED = ["--policies", "warmpool,keda-redis-cd300,oracle"]


# ---- runs ----------------------------------------------------------------------------------------
def job_list(seeds):
    """(kind, workload, seed, extra args) for every run of the report."""
    jobs = []
    for w in WORKLOADS:
        for s in seeds:
            # Seed 1 also records a timeline (60 s) for the plots.
            jobs.append(("base", w, s, ["--timeline", "60"] if s == "1" else []))
            # What-if: the cluster autoscaler removes empty nodes after 1 min instead of 10 (AKS
            # autoscaler profile scale-down-unneeded-time=1m, scale-down-delay-after-add=1m).
            jobs.append(("ca1m", w, s, CA_1MIN))
    for s in seeds:
        # What-if: the batch's duration is known up front, so drainSeconds sizes the first burst;
        # and with tighter drains for W1's latency target.
        jobs.append(("w1task", "W1", s, ["--meta", "taskSeconds=1.3"]))
        for d in DRAINS_W1:
            jobs.append((f"w1taskdrain{d}", "W1", s,
                         ["--meta", "taskSeconds=1.3", "--meta", f"drainSeconds={d}"]))
        # What-if: other latency budgets for W2's spikes, and the same on W4.
        for d in DRAINS:
            for w in ("W2", "W4"):
                jobs.append((f"drain{d}", w, s, ["--meta", f"drainSeconds={d}"] + COMPARED))
        # What-if: boot times without their tail, every policy alike.
        jobs.append(("notail", "W2", s, NO_TAIL + COMPARED))
        # What-if: fast GPU nodes (standby VMs, driver and image on the node).
        for w in FAST_WORKLOADS:
            jobs.append(("fast", w, s, FAST_NODES + COMPARED))
    return jobs


def run_path(out_dir, kind, w, s):
    return os.path.join(out_dir, f"{kind}-{w}-{s}.json")


def run_all(sim, out_dir, seeds, parallel):
    jobs = job_list(seeds)
    # Longest runs (W3, then W5) first so the parallel runs finish together.
    order = {"W3": 0, "W5": 1, "W2": 2, "W4": 3, "W1": 4}
    jobs.sort(key=lambda j: order[j[1]])

    def run(job):
        kind, w, s, extra = job
        out = run_path(out_dir, kind, w, s)
        args = [sim, "run", "--workload", w, "--seed", s, "--format", "json"] + extra
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
        for s in self.seeds:
            path = run_path(self.out_dir, kind, w, s)
            if os.path.exists(path):
                with open(path) as f:
                    runs.append(json.load(f))
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


def med(values):
    return statistics.median(values) if values else float("nan")


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


def target_cells(w, pols):
    """The saving, p95 and oracle-ratio cells of the targets table."""
    sv, dp, rt = saving(pols), p95_delta(pols), ratio(pols)
    rt_text = times(rt)
    if w in ORACLE_TARGET:
        rt_text += f" (≤ {ORACLE_TARGET[w]}: {verdict(max(rt) <= ORACLE_TARGET[w])})"
    return (f"{pct(sv)} % ({verdict(min(sv) >= 0.4)}) | {secs(dp)} s ({verdict(max(dp) <= 60)}) "
            f"| {rt_text}")


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
        if name == "oracle":
            label += " (" + ", ".join(sorted({p.get("variant", "") for p in ps})) + ")"
        cells = [label, mmm([p["billedGpuHours"] for p in ps]),
                 mmm([p["billedDollars"] for p in ps], "{:.0f}"),
                 mmm(boot, "{:.0f}") + " %", mmm(idle, "{:.0f}") + " %"]
        cells += [mmm([p[k] for p in ps], "{:.0f}")
                  for k in ("waitP50", "waitP95", "waitP99", "coldStarts", "killedTasks")]
        cells.append(mmm([p["reversalsPerHour"] for p in ps], "{:.2f}"))
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def ca_rows(base, ca1m):
    """GPU-h of warmpool, the oracle and KEDA, with the default and the 1-minute autoscaler."""
    rows = []
    for w in WORKLOADS:
        b, c = base[w], ca1m[w]
        if not c:
            continue
        cells = [w] + [mmm(field(b, n, "billedGpuHours"))
                       for n in ("warmpool", "oracle", "keda-redis-cd300")]
        cells += [mmm(field(c, n, "billedGpuHours"))
                  for n in ("warmpool", "oracle", "keda-redis-cd300")]
        cells.append(pct(saving(c)) + " %")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def w1_cells(pols):
    return (f"{mmm(field(pols, 'warmpool', 'billedGpuHours'))} "
            f"| {mmm(field(pols, 'warmpool', 'waitP95'), '{:.0f}')} | {pct(saving(pols))} % "
            f"| {secs(p95_delta(pols))} s | {times(ratio(pols))}")


def w2_cells(pols, pols4):
    return (f"{mmm(field(pols, 'warmpool', 'billedGpuHours'))} "
            f"| {mmm(field(pols, 'warmpool', 'waitP95'), '{:.0f}')} | {pct(saving(pols))} % "
            f"| {secs(p95_delta(pols))} s | {pct(saving(pols4))} % | {times(ratio(pols4))}")


def w4_learning(runs):
    """Seed 1 of W4: warmpool's GPU-h in the first 6 h, and its node-hours after them relative
    to the oracle's (from the 60 s timeline)."""
    pols = runs.seed1("W4")
    if not pols:
        return {}
    wp, orc = pols["warmpool"], pols["oracle"]
    tl = wp["timeline"]
    step = (tl[1][0] - tl[0][0]) if len(tl) > 1 else 60
    first = sum(r[5] for r in tl if r[0] < 6 * 3600) * step / 3600

    def node_hours_after(p, t0):  # sampled node count x step, from t0 on
        return sum(r[5] for r in p["timeline"] if r[0] >= t0) * step / 3600

    later = node_hours_after(wp, 6 * 3600) / max(1e-9, node_hours_after(orc, 6 * 3600))
    return {"w4_seed1": "yes", "w4_first_6h": f"{first:.0f}",
            "w4_wp_gpuh": f"{wp['billedGpuHours']:.0f}", "w4_later_ratio": f"{later:.2f}"}


def targets(base, w2drain, w4drain):
    v = {}
    for w in WORKLOADS:
        v[f"{w}_targets"] = target_cells(w, base[w])
    kills = field(base["W5"], "warmpool", "killedTasks")
    v["W5_kills"] = mmm(kills, "{:.0f}")
    v["W5_kills_verdict"] = verdict(max(kills) == 0)
    v["W5_keda_kills"] = mmm(field(base["W5"], "keda-redis-cd300", "killedTasks"), "{:.0f}")
    rev = field(base["W3"], "warmpool", "reversalsPerHour")
    v["W3_rev"] = mmm(rev, "{:.2f}")
    v["W3_rev_verdict"] = verdict(max(rev) <= 2)
    v["W4_cold"] = mmm(field(base["W4"], "warmpool", "coldStarts"), "{:.0f}")
    t = w2drain[80]
    v["w2d80_saving"] = pct(saving(t))
    v["w2d80_p95"] = secs(p95_delta(t))
    v["w2d80_verdict"] = verdict(min(saving(t)) >= 0.4 and max(p95_delta(t)) <= 60)
    v["w4d80_saving"] = pct(saving(w4drain[80]))
    v["w4d80_ratio"] = mmm(ratio(w4drain[80]), "{:.2f}")
    all_w = sum(med(field(base[w], "warmpool", "billedGpuHours")) for w in WORKLOADS)
    all_k = sum(med(field(base[w], "keda-redis-cd300", "billedGpuHours")) for w in WORKLOADS)
    v["sum_warmpool"] = f"{all_w:,.0f}"
    v["sum_keda"] = f"{all_k:,.0f}"
    v["sum_saving"] = f"{100 * (1 - all_w / all_k):+.0f}"
    return v


def what_ifs(runs, base):
    v = {}
    v["w1_row_base"] = w1_cells(base["W1"])
    v["w1_row_task"] = w1_cells(runs.by_policy("w1task", "W1"))
    for d in DRAINS_W1:
        v[f"w1_row_d{d}"] = w1_cells(runs.by_policy(f"w1taskdrain{d}", "W1"))
    w2drain = {d: runs.by_policy(f"drain{d}", "W2") for d in DRAINS}
    w4drain = {d: runs.by_policy(f"drain{d}", "W4") for d in DRAINS}
    v["w2_row_auto"] = w2_cells(base["W2"], base["W4"])
    for d in DRAINS:
        v[f"w2_row_d{d}"] = w2_cells(w2drain[d], w4drain[d])
    notail = runs.by_policy("notail", "W2")
    v["notail_p95"] = secs(p95_delta(notail))
    v["notail_saving"] = pct(saving(notail))
    v["base_w2_p95"] = secs(p95_delta(base["W2"]))
    fast = {w: runs.by_policy("fast", w) for w in FAST_WORKLOADS}
    for w in FAST_WORKLOADS:
        v[f"fast_{w}"] = (f"{pct(saving(fast[w]))} % | {secs(p95_delta(fast[w]))} s "
                          f"| {times(ratio(fast[w]))}")
    beaten = [w for w in FAST_WORKLOADS if min(ratio(fast[w])) < 1]
    if beaten:
        v["fast_beaten"] = ", ".join(beaten)
    v.update(targets(base, w2drain, w4drain))
    return v


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


def figures(runs, commit):
    """Every value the template names."""
    base = {w: runs.by_policy("base", w) for w in WORKLOADS}
    ca1m = {w: runs.by_policy("ca1m", w) for w in WORKLOADS}
    v = {"commit": commit, "seeds_list": ", ".join(runs.seeds), "n_seeds": str(len(runs.seeds)),
         "ca_rows": ca_rows(base, ca1m),
         "w4_keda_p50": f"{med(field(base['W4'], 'keda-redis-cd300', 'waitP50')):.0f}",
         "w4_wp_p50": f"{med(field(base['W4'], 'warmpool', 'waitP50')):.0f}"}
    for w in WORKLOADS:
        v[f"{w}_rows"] = policy_rows(base[w])
    v.update(cluster_values(runs.load("base", "W1")[0]["cluster"]))
    v.update(what_ifs(runs, base))
    v.update(w4_learning(runs))
    return v


# ---- plots ---------------------------------------------------------------------------------------
def plot(runs, img_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for w in WORKLOADS:
        pols = runs.seed1(w)
        if not pols:
            continue
        fig, axes = plt.subplots(3, 1, figsize=(11, 7.5), sharex=True)
        for name, colour in (("warmpool", "tab:green"), ("keda-redis-cd300", "tab:red"),
                             ("oracle", "tab:gray")):
            p = pols.get(name)
            if not p or "timeline" not in p:
                continue
            rows = [r for r in p["timeline"] if r[0] <= WINDOW_H[w] * 3600]
            t = [r[0] / 3600 for r in rows]
            style = "--" if name == "oracle" else "-"
            axes[0].plot(t, [r[1] for r in rows], style, color=colour, label=name, lw=1)
            axes[1].step(t, [r[2] for r in rows], style, color=colour, label=name, lw=1,
                         where="post")
            axes[2].step(t, [r[5] for r in rows], style, color=colour, label=name, lw=1,
                         where="post")
        axes[0].set_ylabel("queue (LLEN)")
        axes[1].set_ylabel("desired replicas")
        axes[2].set_ylabel("GPU nodes (billed)")
        axes[2].set_xlabel("hours")
        axes[0].set_title(f"{w}, seed 1: warmpool vs KEDA redis (cooldown 300) vs oracle")
        axes[0].legend(loc="upper right", fontsize=8)
        for ax in axes:
            ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(img_dir, f"scaling-{w}.png"), dpi=90)
        plt.close(fig)


# ---- template ------------------------------------------------------------------------------------
IF_BLOCK = re.compile(r"\[% if (\w+) %\]((?:(?!\[% if ).)*?)\[% end %\]", re.S)


def render(template, values):
    """Fills `${name}` from values; `[% if name %]...[% end %]` keeps its text only when name is
    among values (blocks nest; a block of whole lines ends with `[% end %]` at the start of the
    line after it)."""
    while True:
        text = IF_BLOCK.sub(lambda m: m.group(2) if m.group(1) in values else "", template)
        if text == template:
            break
        template = text
    return string.Template(template).substitute(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", required=True, help="the warmpool-sim binary")
    ap.add_argument("--jobs", type=int, default=2, help="runs in parallel")
    ap.add_argument("--seeds", default="1 2 3 4 5", help="space-separated seeds")
    ap.add_argument("--out-dir", help="where the raw JSON goes (default: a temporary dir)")
    ap.add_argument("--docs", default=os.path.join(ROOT, "docs"), help="docs dir to write")
    ap.add_argument("--commit", help="commit named in the report (default: git HEAD)")
    ap.add_argument("--no-run", action="store_true", help="reuse the JSON already in --out-dir")
    args = ap.parse_args()
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
    if not args.no_run:
        run_all(args.sim, out_dir, seeds, args.jobs)
    runs = Runs(out_dir, seeds)
    plot(runs, os.path.join(args.docs, "img"))
    with open(TEMPLATE) as f:
        text = render(f.read(), figures(runs, commit))
    out = os.path.join(args.docs, "SCALING.md")
    with open(out, "w") as f:
        f.write(text)
    print(f"wrote {out} and docs/img/scaling-W*.png", file=sys.stderr)


if __name__ == "__main__":
    main()
