#!/usr/bin/python3
"""Judges a changed policy in minutes against a finished report's runs: reruns warmpool alone on
every workload and population member of a scaling report's out-dir (its seeds and imported
traces), and prints, by the report's own rules (scaling_pareto: seed by seed), what the Targets
table would say: GPU-h, p95 wait, tasks killed or requeued, reversals per hour, cost at equal SLO
and the grid configurations that dominate warmpool; then the dominated count of the population
and of the held-out windows, and how many distinct arrival patterns those are (functions of one
app often share a timer, so one pattern can count several times). The KEDA grid does not depend
on the policy, so the report's grid runs are reused as they are.

Usage: scripts/policy_check.py --sim NEW-warmpool-sim --report-dir OUT_DIR [--out-dir DIR]
       [--seeds "1 2 3 4 5"] [--jobs 2] [--meta key=value ...] [--scaledobject key=value ...]
(OUT_DIR: the --out-dir of a finished scripts/scaling_report.py run with the same seeds.)
"""
import argparse
import os
import statistics
import sys
import tempfile

import scaling_equal_service as equal
import scaling_pareto as pareto
import scaling_population as population
import scaling_report as report


def jobs(seeds, meta, report_dir, scaledobject=()):
    """warmpool's run (kind "base") of every workload and population member on each seed (the
    held-out windows' members where the report imported them), with the metadata and the
    Kubernetes settings (warmpool-sim run --scaledobject) given."""
    extra = ["--policies", "warmpool"] + [a for m in meta for a in ("--meta", m)] + \
        [a for k in scaledobject for a in ("--scaledobject", k)]
    out = [("base", w, s, extra) for w in filter(report.available, report.WORKLOADS)
           for s in report.seeds_of(w, seeds)]
    out += [("base", w, s, extra) for w in population_members()
            for s in report.population_seeds(seeds)
            if os.path.exists(population.workload_csv(report_dir, w, s))]
    return out


def population_members():
    """The population's members, then the held-out windows'."""
    return population.members(report.TRACE_DATA) + population.held_out_members(report.TRACE_DATA)


def workload_lines(out_dir, report_dir, seeds):
    """The Targets table's figures of warmpool's runs in out_dir against the grid's in
    report_dir (scaling_equal_service.equal_service), one line per workload that ran."""
    ran = {w: report.Runs(out_dir, seeds).by_policy("base", w) for w in report.WORKLOADS}
    grid = {w: report.Runs(report_dir, seeds).by_policy("grid", w) for w in report.WORKLOADS}
    lines = [f"{'workload':14} {'GPU-h':>9} {'p95 s':>6} {'killed':>6} {'rev/h':>5} "
             f"{'cost@SLO':>8}  dominating"]
    for w, e in equal.equal_service(ran, grid, {}).items():
        wp, cost = e["warmpool"], e["ratio"]
        killed = max(p["killedTasks"] + p["requeuedTasks"] for p in ran[w]["warmpool"])
        rev = max(p["reversalsPerHour"] for p in ran[w]["warmpool"])
        lines.append(f"{w:14} {wp.gpuh:9.1f} {wp.p95:6.0f} {killed:6d} {rev:5.2f} "
                     f"{'-' if cost is None else f'{cost:.2f}':>8}  "
                     f"{', '.join(p.name for p in e['dominating']) or 'none'}")
    return lines


def population_lines(out_dir, report_dir, seeds, margin=0.02):
    """The figures (scaling_population.grid_summary) of warmpool's runs in out_dir against the
    grid's in report_dir, for the population and for the held-out windows (of a report that ran
    them), and the functions dominated by more than `margin`."""
    return _judged_lines("population", out_dir, report_dir, population.members(report.TRACE_DATA),
                         seeds, margin) + \
        _judged_lines("held out", out_dir, report_dir,
                      population.held_out_members(report.TRACE_DATA), seeds, margin)


def _judged_lines(label, out_dir, report_dir, members, seeds, margin):
    rows = population.grid_summary(out_dir, members, report.run_path, seeds, report_dir)
    if not rows:
        return []
    dominated = [(pareto.gpuh_ratio(wp, d), fn, d) for fn, wp, _, d, _ in rows if d]
    wide = [d for d in dominated if d[0] > 1 + margin]
    patterns = population.dominated_patterns(out_dir, members, report.run_path, seeds, report_dir)
    lines = [f"{label}: {len(rows)} functions, {sum(r[1].gpuh for r in rows):.1f} GPU-h, "
             f"median p95 {statistics.median(r[1].p95 for r in rows):.0f} s, dominated on "
             f"{len(dominated)} ({len(wide)} by more than {100 * margin:.0f} % of GPU-h; "
             f"{patterns} distinct arrival patterns)"]
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
    ap.add_argument("--scaledobject", action="append", default=[],
                    help="warmpool's Kubernetes setting key=value (warmpool-sim run --scaledobject)")
    args = ap.parse_args()
    seeds = args.seeds.split()
    out_dir = args.out_dir or tempfile.mkdtemp()
    os.makedirs(out_dir, exist_ok=True)
    print(f"policy-check: runs in {out_dir}", file=sys.stderr)
    runs = jobs(seeds, args.meta, args.report_dir, args.scaledobject)
    report.run_jobs(args.sim, args.report_dir, out_dir, runs, args.jobs, resume=True)
    print("\n".join(workload_lines(out_dir, args.report_dir, seeds) +
                    population_lines(out_dir, args.report_dir, seeds)))


if __name__ == "__main__":
    main()
