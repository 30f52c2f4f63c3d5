#!/usr/bin/python3
"""The report's judgement at equal service (issue 21), from warmpool-sim results already summarised
(scaling_pareto.Point): per workload warmpool against the KEDA grid and the two oracles, and the
Markdown of docs/SCALING.md's equal-service sections. Used by scaling_report.py."""
import scaling_pareto as pareto

# warmpool's GPU-h over the arrival-blind oracle's, at most (issue 21).
ORACLE_DURATIONS_TARGET = 1.5


def equal_service(base, grid, oracle_sweep):
    """Per workload: warmpool's, the oracles' and every grid configuration's Point, the front,
    cost at equal SLO, the grid configurations that dominate warmpool, and the cheapest
    arrival-blind oracle (of oracle_sweep[w] and its default) that waits no longer than warmpool."""
    out = {}
    for w in base:
        pols = pareto.summarize(base[w])
        points = list(pareto.grid_points(grid[w]).values())
        if "warmpool" not in pols or not points:
            continue
        wp = pols["warmpool"]
        ratio, best = pareto.cost_at_equal_slo(wp, points)
        out[w] = {"warmpool": wp, "oracle": pols.get("oracle"),
                  "oracle-durations": pols.get("oracle-durations"), "points": points,
                  "front": pareto.pareto_front(points), "ratio": ratio, "best": best,
                  "dominating": pareto.dominating(wp, points)}
        od = [pols["oracle-durations"]] if "oracle-durations" in pols else []
        od += oracle_sweep.get(w, [])
        out[w]["od-at-p95"] = pareto.cheapest_at_slo(od, wp)
        # What the cost at equal SLO could be at warmpool's p95: the oracles' GPU-h there (the
        # arrival-blind one's cheapest setting, the clairvoyant one when as fast) / the grid's.
        oracle = pols.get("oracle")
        oracle = oracle if oracle and pareto.no_slower(oracle, wp) else None
        out[w]["od-bound"], out[w]["oracle-bound"] = (
            pareto.gpuh_ratio(o, best) if o and best else None
            for o in (out[w]["od-at-p95"], oracle))
    return out


def point_cells(p):
    return f"{p.gpuh:.1f} | {p.p95:.0f} | {p.killed}" if p else "- | - | -"


def cost_text(e):
    if e["ratio"] is None:
        text = "no grid config reaches warmpool's p95"
        if e["front"]:  # the fastest that kills nothing: the end of the front
            fast = e["front"][-1]
            text += (f" (the fastest that kills nothing, `{fast.name}`: p95 {fast.p95:.0f} s for "
                     f"{pareto.gpuh_ratio(fast, e['warmpool']):.2f}× warmpool's GPU-h)")
        return text
    return f"{e['ratio']:.2f} (`{e['best'].name}`)"


def front_text(front):
    """The front as `a` = `b` GPU-h / p95, configurations with the same medians on one entry."""
    groups = []
    for p in front:
        if groups and (groups[-1][0].gpuh, groups[-1][0].p95) == (p.gpuh, p.p95):
            groups[-1].append(p)
        else:
            groups.append([p])
    return ", ".join(" = ".join(f"`{p.name}`" for p in g) + f" {g[0].gpuh:.1f} GPU-h / "
                     f"{g[0].p95:.0f} s" for g in groups) or "empty"


def dominating_text(e, limit=5):
    names = [f"`{p.name}`" for p in e["dominating"]]
    if not names:
        return "none"
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def oracle_ratio(e, key="oracle-durations"):
    od = e[key]
    return pareto.gpuh_ratio(e["warmpool"], od) if od and od.gpuh else None


def oracle_at_p95_text(e):
    """warmpool / the cheapest arrival-blind oracle setting that waits no longer than warmpool."""
    od = e["od-at-p95"]
    if od is None:
        return "no oracle-durations setting swept waits as little as warmpool"
    setting = pareto.setting_of(od) or "the shipped settings"
    return (f"{oracle_ratio(e, 'od-at-p95'):.2f}× (oracle-durations with {setting}, "
            f"p95 {od.p95:.0f} s)")


def equal_service_sections(es):
    """One section per workload: the Pareto plot, warmpool against the cheapest grid configuration
    at its p95 and both oracles, what dominates it, and the front itself."""
    out = []
    for w, e in es.items():
        rows = [f"| warmpool (default) | {point_cells(e['warmpool'])} |"]
        best = e["best"]
        label = f"cheapest grid config with p95 ≤ warmpool's: `{best.name}`" if best else \
            "cheapest grid config with p95 ≤ warmpool's: none"
        rows.append(f"| {label} | {point_cells(best)} |")
        rows.append(f"| oracle-durations (knows durations, not arrivals) "
                    f"| {point_cells(e['oracle-durations'])} |")
        rows.append(f"| oracle (knows arrivals and durations) | {point_cells(e['oracle'])} |")
        ratio = oracle_ratio(e)
        out.append(
            f"### {w} at equal service\n\n![Pareto front, {w}](img/pareto-{w}.png)\n\n"
            "| | GPU-h | wait p95 (s) | killed (most on a seed) |\n|---|---|---|---|\n"
            + "\n".join(rows) + "\n\n"
            f"**Cost at equal SLO** (warmpool GPU-h / that config's): {cost_text(e)}. "
            f"Grid configs that dominate warmpool: {dominating_text(e)}. "
            f"warmpool / oracle-durations GPU-h: "
            f"{'-' if ratio is None else f'{ratio:.2f}'}; against the cheapest "
            f"oracle-durations that waits no longer than warmpool: {oracle_at_p95_text(e)}. "
            f"{len(e['points'])} grid configs, {sum(p.killed == 0 for p in e['points'])} "
            f"kill nothing; the front (GPU-h / p95): {front_text(e['front'])}.\n")
    return "\n".join(out)


def oracle_bound_rows(es, runs):
    """Where warmpool bills more than ORACLE_DURATIONS_TARGET x the cheapest arrival-blind oracle:
    both points, the ratio at warmpool's p95 (the service level) and warmpool told the workload's
    mean duration (run kind "stated": the first burst's durations)."""
    rows = []
    for w, e in es.items():
        od, ratio = e["oracle-durations"], oracle_ratio(e)
        if ratio is None or ratio <= ORACLE_DURATIONS_TARGET:
            continue
        told = pareto.summarize(runs.by_policy("stated", w)).get("warmpool")
        at_p95 = "-" if e["od-at-p95"] is None else f"{oracle_ratio(e, 'od-at-p95'):.2f}×"
        told_cells = "- | -" if told is None else (
            f"{told.gpuh:.1f} / {told.p95:.0f} | {pareto.gpuh_ratio(told, od):.2f}×")
        rows.append(f"| {w} | {e['warmpool'].gpuh:.1f} / {e['warmpool'].p95:.0f} "
                    f"| {od.gpuh:.1f} / {od.p95:.0f} | {ratio:.2f}× | {at_p95} | {told_cells} |")
    return "\n".join(rows) or "| (none) | | | | | | |"
