#!/usr/bin/python3
"""Judges a changed policy in minutes against a finished report's runs: reruns warmpool alone on
every workload and population member of a scaling report's out-dir (its seeds and imported
traces), and prints, by the report's own rules (scaling_pareto: seed by seed), what the Targets
table would say: GPU-h, p95 wait, tasks killed or requeued, reversals per hour, cost at equal SLO
and the grid configurations that dominate warmpool; then the population's dominated count. The
KEDA grid does not depend on the policy, so the report's grid runs are reused as they are.

Usage: scripts/policy_check.py --sim NEW-warmpool-sim --report-dir OUT_DIR [--out-dir DIR]
       [--seeds "1 2 3 4 5"] [--jobs 2] [--meta key=value ...]
(OUT_DIR: the --out-dir of a finished scripts/scaling_report.py run with the same seeds.)
"""
import argparse
import concurrent.futures
import os
import statistics
import subprocess
import sys
import tempfile

import scaling_pareto as pareto
import scaling_population as population
import scaling_report as report


def jobs(report_dir, seeds):
    """(run name, seed, workload CSV or generator) of every workload and population member."""
    out = []
    for w in filter(report.available, report.WORKLOADS):
        out += [(w, s, report.workload_arg(report_dir, w, s)) for s in report.seeds_of(w, seeds)]
    for fn in population.functions(report.TRACE_DATA):
        w = population.PREFIX + fn
        out += [(w, s, population.workload_csv(report_dir, w, s))
                for s in report.population_seeds(seeds)]
    return out


def run_all(sim, report_dir, out_dir, seeds, parallel, meta):
    def one(job):
        w, s, workload = job
        path = report.run_path(out_dir, "base", w, s)
        if os.path.exists(path):
            return
        args = [sim, "run", "--workload", workload, "--seed", s, "--format", "json",
                "--policies", "warmpool"] + [a for m in meta for a in ("--meta", m)]
        with open(path + ".tmp", "w") as f:
            subprocess.run(args, stdout=f, check=True)
        os.replace(path + ".tmp", path)

    with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
        for future in [pool.submit(one, j) for j in jobs(report_dir, seeds)]:
            future.result()


def judge(policy_runs, grid_runs):
    """(warmpool's Point, cost at equal SLO or None, [dominating Points]) of one workload;
    policy_runs and grid_runs: {policy: [result per seed, tagged with its seed]}."""
    wp = pareto.summarize(policy_runs)["warmpool"]
    points = list(pareto.grid_points(grid_runs).values())
    return wp, pareto.cost_at_equal_slo(wp, points)[0], pareto.dominating(wp, points)


def workload_lines(out_dir, report_dir, seeds):
    lines = [f"{'workload':14} {'GPU-h':>9} {'p95 s':>6} {'killed':>6} {'rev/h':>5} "
             f"{'cost@SLO':>8}  dominating"]
    for w in filter(report.available, report.WORKLOADS):
        ran = report.Runs(out_dir, seeds).by_policy("base", w)
        grid = report.Runs(report_dir, seeds).by_policy("grid", w)
        if "warmpool" not in ran or not grid:
            continue
        wp, cost, dom = judge(ran, grid)
        killed = max(p["killedTasks"] + p["requeuedTasks"] for p in ran["warmpool"])
        rev = max(p["reversalsPerHour"] for p in ran["warmpool"])
        lines.append(f"{w:14} {wp.gpuh:9.1f} {wp.p95:6.0f} {killed:6d} {rev:5.2f} "
                     f"{'-' if cost is None else f'{cost:.2f}':>8}  "
                     f"{', '.join(p.name for p in dom) or 'none'}")
    return lines


def population_lines(out_dir, report_dir, seeds, margin=0.02):
    members = [population.PREFIX + fn for fn in population.functions(report.TRACE_DATA)]
    gpuh, p95s, dominated = 0.0, [], []
    for w in members:
        ran = population._by_policy(out_dir, "base", w, seeds, report.run_path)
        grid = population._by_policy(report_dir, "grid", w, seeds, report.run_path)
        if "warmpool" not in ran or not grid:
            continue
        wp, _, dom = judge(ran, grid)
        gpuh += wp.gpuh
        p95s.append(wp.p95)
        if dom:
            best = min(dom, key=lambda p: p.gpuh)
            dominated.append((pareto.gpuh_ratio(wp, best), w[len(population.PREFIX):], best))
    if not p95s:
        return []
    wide = [d for d in dominated if d[0] > 1 + margin]
    lines = [f"population: {len(p95s)} functions, {gpuh:.1f} GPU-h, median p95 "
             f"{statistics.median(p95s):.0f} s, dominated on {len(dominated)} "
             f"({len(wide)} by more than {100 * margin:.0f} % of GPU-h)"]
    lines += [f"  {fn} {ratio:.2f}x {best.name}" for ratio, fn, best in sorted(wide, reverse=True)]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", required=True, help="the warmpool-sim binary to judge")
    ap.add_argument("--report-dir", required=True, help="a finished report's --out-dir")
    ap.add_argument("--out-dir", help="where this check's runs go (default: a temporary dir)")
    ap.add_argument("--seeds", default="1 2 3 4 5", help="the report's seeds")
    ap.add_argument("--jobs", type=int, default=2, help="runs in parallel")
    ap.add_argument("--meta", action="append", default=[], help="warmpool metadata key=value")
    args = ap.parse_args()
    seeds = args.seeds.split()
    out_dir = args.out_dir or tempfile.mkdtemp()
    os.makedirs(out_dir, exist_ok=True)
    print(f"policy-check: runs in {out_dir}", file=sys.stderr)
    run_all(args.sim, args.report_dir, out_dir, seeds, args.jobs, args.meta)
    print("\n".join(workload_lines(out_dir, args.report_dir, seeds) +
                    population_lines(out_dir, args.report_dir, seeds)))


if __name__ == "__main__":
    main()
