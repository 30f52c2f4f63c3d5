#!/usr/bin/python3
"""The plots of docs/SCALING.md (Debian python3-matplotlib, Agg): each workload's seed-1 timeline
(docs/img/scaling-<W>.png) and its Pareto front against the KEDA grid (docs/img/pareto-<W>.png).
Called by scaling_report.py with its runs and figures."""
import os


def plot(runs, img_dir, workloads):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for w in workloads:
        pols = runs.seed1(w)
        if not pols:
            continue
        fig, axes = plt.subplots(3, 1, figsize=(11, 7.5), sharex=True)
        for name, colour in (("warmpool", "tab:green"), ("keda-redis-cd300", "tab:red"),
                             ("oracle", "tab:gray")):
            p = pols.get(name)
            if not p or "timeline" not in p:
                continue
            rows = [r for r in p["timeline"] if r[0] <= workloads[w].plot_hours * 3600]
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


def plot_pareto(es, img_dir):
    """docs/img/pareto-W.png: every grid configuration (median GPU-h against median p95 over the
    seeds), the front of those that kill nothing, warmpool's default and both oracles."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for w, e in es.items():
        fig, ax = plt.subplots(figsize=(9, 6))
        for cron, marker in ((False, "o"), (True, "s")):
            for killing, alpha in ((False, 0.8), (True, 0.35)):
                pts = [p for p in e["points"]
                       if ("-cron" in p.name) == cron and (p.killed > 0) == killing]
                if not pts:
                    continue
                label = ("KEDA grid" + (", cron floor" if cron else "")
                         + (", kills tasks" if killing else ""))
                ax.scatter([p.gpuh for p in pts], [p.p95 for p in pts], marker=marker, s=18,
                           facecolors="none" if killing else "tab:red", edgecolors="tab:red",
                           alpha=alpha, label=label)
        front = e["front"]
        ax.step([p.gpuh for p in front], [p.p95 for p in front], "-", where="post",
                color="tab:red", lw=1, label="Pareto front (kills nothing)")
        for key, colour, marker in (("warmpool", "tab:green", "*"),
                                    ("oracle-durations", "tab:blue", "D"),
                                    ("oracle", "tab:gray", "D")):
            p = e.get(key)
            if p:
                ax.scatter([p.gpuh], [p.p95], marker=marker, s=140 if marker == "*" else 50,
                           color=colour, zorder=5, label=f"{key} ({p.gpuh:.0f} GPU-h)")
        ax.set_xscale("log")
        ax.set_xlabel("billed GPU-h (median over seeds, log scale)")
        ax.set_ylabel("p95 wait, s (median over seeds)")
        ax.set_title(f"{w}: warmpool vs KEDA redis-scaler grid at equal service")
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="upper right", fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(img_dir, f"pareto-{w}.png"), dpi=90)
        plt.close(fig)
