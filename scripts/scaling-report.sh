#!/usr/bin/env bash
# Regenerates docs/SCALING.md and docs/img/scaling-W*.png: builds warmpool-sim, runs every
# workload W1..W5 with seeds 1..5 (warmpool and every baseline in the same run), plus the
# cluster what-ifs, and writes the tables and plots (Debian python3-matplotlib).
#
# Usage: scripts/scaling-report.sh        Env: BUILD_DIR (default build-report), JOBS (default 2),
#        SEEDS (default "1 2 3 4 5"), OUT_DIR (default a temp dir for the raw JSON).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_DIR=${BUILD_DIR:-build-report}
JOBS=${JOBS:-2}
SEEDS=${SEEDS:-"1 2 3 4 5"}
OUT_DIR=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$OUT_DIR" docs/img

if [[ -z "${WARMPOOL_SIM:-}" ]]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWARMPOOL_BUILD_TESTS=OFF \
    -DWARMPOOL_BUILD_BENCH=OFF -DWARMPOOL_ENABLE_CUDA=OFF >/dev/null
  cmake --build "$BUILD_DIR" --target warmpool-sim -j "$JOBS" >/dev/null
  WARMPOOL_SIM="$BUILD_DIR/sim/warmpool-sim"
fi
echo "warmpool-sim: $WARMPOOL_SIM; raw results in $OUT_DIR" >&2

# One line per run: <output file> <args...>. Seed 1 also records a timeline (60 s) for the plots.
jobs_file="$OUT_DIR/jobs.txt"
: >"$jobs_file"
for w in W1 W2 W3 W4 W5; do
  for s in $SEEDS; do
    tl=""
    [[ "$s" == "1" ]] && tl="--timeline 60"
    echo "$OUT_DIR/base-$w-$s.json run --workload $w --seed $s --format json $tl" |
      sed 's/ *$//' >>"$jobs_file"  # xargs -L joins lines that end in a blank
    # What-if: the cluster autoscaler removes empty nodes after 1 min instead of 10 (AKS
    # autoscaler profile scale-down-unneeded-time=1m, scale-down-delay-after-add=1m), for every
    # policy alike.
    echo "$OUT_DIR/ca1m-$w-$s.json run --workload $w --seed $s --format json" \
      "--cluster caUnneededSeconds=60 --cluster caDelayAfterAddSeconds=60" >>"$jobs_file"
  done
done
for s in $SEEDS; do
  # What-if: the batch job's duration is known up front (taskSeconds), so drainSeconds can size the
  # very first burst.
  echo "$OUT_DIR/w1task-W1-$s.json run --workload W1 --seed $s --format json" \
    "--meta taskSeconds=1.3" >>"$jobs_file"
  # ... and with tighter drains (105 and 110 s instead of auto = 150 s) for W1's latency target.
  for d in 105 110; do
    echo "$OUT_DIR/w1taskdrain$d-W1-$s.json run --workload W1 --seed $s --format json" \
      "--meta taskSeconds=1.3 --meta drainSeconds=$d" >>"$jobs_file"
  done
  # What-if: other latency budgets for W2's spikes (drainSeconds 120, 80, 60 instead of auto = 150).
  # The same drainSeconds on W4, where a warm pool has a cold start + drainSeconds per batch.
  for d in 120 80 60; do
    for w in W2 W4; do
      echo "$OUT_DIR/drain$d-$w-$s.json run --workload $w --seed $s --format json" \
        "--meta drainSeconds=$d --policies warmpool,keda-redis-cd300,oracle" >>"$jobs_file"
    done
  done
  # What-if: the same boot times without their tail (every VM boots in the median 240 s, every
  # driver install takes the median 90 s), for every policy alike: how much of W2's p95 is the tail.
  echo "$OUT_DIR/notail-W2-$s.json run --workload W2 --seed $s --format json" \
    "--cluster vmBootP95=240 --cluster driverP95=90" \
    "--policies warmpool,keda-redis-cd300,oracle" >>"$jobs_file"
  # What-if: fast GPU nodes (standby VMs that resume in ~35 s, the driver and image already on the
  # node), for every policy alike; warmpool's ScaledObject unchanged.
  for w in W2 W4; do
    echo "$OUT_DIR/fast-$w-$s.json run --workload $w --seed $s --format json" \
      "--cluster vmBootMedian=35 --cluster vmBootP95=60 --cluster driverMedian=5" \
      "--cluster driverP95=10 --cluster imagePullSeconds=5" \
      "--policies warmpool,keda-redis-cd300,oracle" >>"$jobs_file"
  done
done

run_one() {
  local out=$1
  shift
  "$WARMPOOL_SIM" "$@" >"$out.tmp" && mv "$out.tmp" "$out"
}
export -f run_one
export WARMPOOL_SIM
# Longest runs (W3) first so the parallel jobs finish together.
sort -t- -k2,2r "$jobs_file" | xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _

SIM_COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
/usr/bin/python3 - "$OUT_DIR" "$ROOT/docs" "$SIM_COMMIT" "$SEEDS" <<'PY'
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

out_dir, docs, commit, seeds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
WORKLOADS = ["W1", "W2", "W3", "W4", "W5"]
POLICIES = ["warmpool", "keda-redis-cd300", "keda-redis-cd60", "keepalive-600",
            "warmpool-prewarm-off", "always-on-1", "always-on-peak", "oracle"]


def load(kind, w):
    runs = []
    for s in seeds:
        path = os.path.join(out_dir, f"{kind}-{w}-{s}.json")
        if os.path.exists(path):
            with open(path) as f:
                runs.append(json.load(f))
    return runs


def by_policy(runs):
    out = {}
    for run in runs:
        for p in run["policies"]:
            out.setdefault(p["policy"], []).append(p)
    return out


def mmm(values, fmt="{:.1f}"):
    if not values:
        return "-"
    lo, med, hi = min(values), statistics.median(values), max(values)
    if lo == hi:
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(lo)}–{fmt.format(hi)})"


def med(values):
    return statistics.median(values) if values else float("nan")


base = {w: by_policy(load("base", w)) for w in WORKLOADS}
ca1m = {w: by_policy(load("ca1m", w)) for w in WORKLOADS}
w1task = by_policy(load("w1task", "W1"))
w1taskdrain = {d: by_policy(load(f"w1taskdrain{d}", "W1")) for d in (105, 110)}
w2drain = {d: by_policy(load(f"drain{d}", "W2")) for d in (120, 80, 60)}
w4drain = {d: by_policy(load(f"drain{d}", "W4")) for d in (120, 80, 60)}
fast = {w: by_policy(load("fast", w)) for w in ("W2", "W4")}
notail = by_policy(load("notail", "W2"))
cluster = load("base", "W1")[0]["cluster"]

# ---- plots ------------------------------------------------------------------------------------
WINDOW_H = {"W1": 3, "W2": 48, "W3": 168, "W4": 8, "W5": 24}
for w in WORKLOADS:
    runs = load("base", w)
    seed1 = [r for r in runs if r["seed"] == 1]
    if not seed1:
        continue
    pols = {p["policy"]: p for p in seed1[0]["policies"]}
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
        axes[1].step(t, [r[2] for r in rows], style, color=colour, label=name, lw=1, where="post")
        axes[2].step(t, [r[5] for r in rows], style, color=colour, label=name, lw=1, where="post")
    axes[0].set_ylabel("queue (LLEN)")
    axes[1].set_ylabel("desired replicas")
    axes[2].set_ylabel("GPU nodes (billed)")
    axes[2].set_xlabel("hours")
    axes[0].set_title(f"{w}, seed 1: warmpool vs KEDA redis (cooldown 300) vs oracle")
    axes[0].legend(loc="upper right", fontsize=8)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(docs, "img", f"scaling-{w}.png"), dpi=90)
    plt.close(fig)

# ---- targets ------------------------------------------------------------------------------------
ORACLE_TARGET = {"W1": 1.25, "W3": 1.25, "W4": 1.25, "W2": 1.6}


def saving(pols, a="warmpool", b="keda-redis-cd300"):
    return [1 - x["billedGpuHours"] / y["billedGpuHours"] for x, y in zip(pols[a], pols[b])]


def p95_delta(pols, a="warmpool", b="keda-redis-cd300"):
    return [x["waitP95"] - y["waitP95"] for x, y in zip(pols[a], pols[b])]


def ratio(pols, a="warmpool", b="oracle"):
    return [x["billedGpuHours"] / y["billedGpuHours"] for x, y in zip(pols[a], pols[b])]


def verdict(ok):
    return "**met**" if ok else "not met"


lines = []
add = lines.append
add("# Scaling: warmpool's policy vs KEDA's redis scaler, in simulation")
add("")
add("<!-- Generated by scripts/scaling-report.sh; do not edit by hand. -->")
add(f"Generated by `scripts/scaling-report.sh` (commit `{commit}`), seeds {', '.join(seeds)}. "
    "Every number below comes from `warmpool-sim run`, which replays each workload through "
    "**the same `Observe`/`Decide` code the scaler runs** (`policy/`), on one simulated cluster "
    "shared by every policy. Cells are *median (min–max)* over the seeds.")
add("")
add("Reproduce one cell: `build-report/sim/warmpool-sim run --workload W2 --seed 3` "
    "(add `--format json` for every field).")
add("")
add("## Targets (issue 5)")
add("")
add("| workload | GPU-h saving vs KEDA redis cd300 (target ≥ 40 %) | p95 wait vs KEDA (target ≤ +60 s) "
    "| warmpool / oracle GPU-h (target) | other |")
add("|---|---|---|---|---|")
for w in WORKLOADS:
    pols = base[w]
    sv = saving(pols)
    dp = p95_delta(pols)
    rt = ratio(pols)
    other = ""
    if w == "W5":
        kills = [p["killedTasks"] for p in pols["warmpool"]]
        keda_kills = [p["killedTasks"] for p in pols["keda-redis-cd300"]]
        other = (f"tasks killed mid-run: warmpool {mmm(kills, '{:.0f}')} "
                 f"(target 0: {verdict(max(kills) == 0)}), KEDA {mmm(keda_kills, '{:.0f}')}")
    if w == "W3":
        rev = [p["reversalsPerHour"] for p in pols["warmpool"]]
        other = f"reversals/h {mmm(rev, '{:.2f}')} (goal ≤ 2: {verdict(max(rev) <= 2)})"
    if w == "W2" and w2drain.get(80):
        t = w2drain[80]
        ok = min(saving(t)) >= 0.4 and max(p95_delta(t)) <= 60
        other = (f"with `drainSeconds: 80`: saving {mmm([100 * x for x in saving(t)], '{:.0f}')} %, "
                 f"p95 {mmm(p95_delta(t), '{:+.0f}')} s (both: {verdict(ok)}; W4 then "
                 f"{mmm([100 * x for x in saving(w4drain[80])], '{:.0f}')} % saving, "
                 f"{mmm(ratio(w4drain[80]), '{:.2f}')}× the oracle)")
    if w == "W4":
        cold = [p["coldStarts"] for p in pols["warmpool"]]
        other = f"cold starts (of ~69 batches): {mmm(cold, '{:.0f}')}"
    target = ORACLE_TARGET.get(w)
    rt_text = f"{mmm(rt, '{:.2f}')}×"
    if target:
        rt_text += f" (≤ {target}: {verdict(max(rt) <= target)})"
    add(f"| {w} | {mmm([100 * x for x in sv], '{:.0f}')} % ({verdict(min(sv) >= 0.4)}) "
        f"| {mmm(dp, '{:+.0f}')} s ({verdict(max(dp) <= 60)}) | {rt_text} | {other} |")
add("")
all_w = sum(med([p['billedGpuHours'] for p in base[w]['warmpool']]) for w in WORKLOADS)
all_k = sum(med([p['billedGpuHours'] for p in base[w]['keda-redis-cd300']]) for w in WORKLOADS)
add(f"Summed over W1–W5 (medians): warmpool {all_w:,.0f} GPU-h, KEDA redis cd300 {all_k:,.0f} "
    f"GPU-h ({100 * (1 - all_w / all_k):+.0f} % saving). W3 and W5 dominate the sum because they "
    "are busy all week.")
add("")
add("Where a target is not met, the section *What bounds the targets* below shows what bounds it "
    "and which cluster setting moves it. The baselines are never changed to meet a target.")
add("")

add("## Results per workload")
add("")
add("GPU-h = billed node time × GPUs per node (boot, idle, work, deletion all billed). "
    f"$ at ${cluster['pricePerNodeHour']}/node-hour. *boot* and *idle* are shares of the billed "
    "time (idle = warm but not running a task: pod start, keep-alive, empty nodes waiting for the "
    "autoscaler). Waits are from runnable to started, in seconds. *cold* counts the times work "
    "became runnable while no worker was ready. *killed* counts tasks SIGKILLed mid-run at the end "
    "of a termination grace period (they are redelivered and run again).")
add("")
for w in WORKLOADS:
    pols = base[w]
    add(f"### {w}")
    add("")
    add(f"![{w}](img/scaling-{w}.png)")
    add("")
    add("| policy | GPU-h | $ | boot | idle | wait p50 | wait p95 | wait p99 | cold | killed "
        "| reversals/h |")
    add("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in POLICIES:
        ps = pols.get(name)
        if not ps:
            continue
        boot = [p["bootGpuHours"] / p["billedGpuHours"] * 100 for p in ps if p["billedGpuHours"]]
        idle = [p["idleGpuHours"] / p["billedGpuHours"] * 100 for p in ps if p["billedGpuHours"]]
        label = name
        if name == "oracle":
            label += " (" + ", ".join(sorted({p.get("variant", "") for p in ps})) + ")"
        add(f"| {label} | {mmm([p['billedGpuHours'] for p in ps])} "
            f"| {mmm([p['billedDollars'] for p in ps], '{:.0f}')} "
            f"| {mmm(boot, '{:.0f}')} % | {mmm(idle, '{:.0f}')} % "
            f"| {mmm([p['waitP50'] for p in ps], '{:.0f}')} "
            f"| {mmm([p['waitP95'] for p in ps], '{:.0f}')} "
            f"| {mmm([p['waitP99'] for p in ps], '{:.0f}')} "
            f"| {mmm([p['coldStarts'] for p in ps], '{:.0f}')} "
            f"| {mmm([p['killedTasks'] for p in ps], '{:.0f}')} "
            f"| {mmm([p['reversalsPerHour'] for p in ps], '{:.2f}')} |")
    add("")

add("## What bounds the targets, and which cluster setting moves them")
add("")
add("**The per-node overhead that no scaler can remove.** Every GPU node a burst needs is billed "
    "from VM creation to deletion: the boot (VM + GPU driver, median "
    f"{cluster['vmBootMedian']:.0f} s + {cluster['driverMedian']:.0f} s here), the pod start "
    f"(image pull {cluster['imagePullSeconds']:.0f} s + model load), and after its last pod leaves, "
    f"the cluster autoscaler's `scale-down-unneeded-time` ({cluster['caUnneededSeconds']} s) plus "
    "the deletion (60 s) — and no scale-down at all within `scale-down-delay-after-add` "
    f"({cluster['caDelayAfterAddSeconds']} s) of any scale-up. For short tasks this overhead is "
    "most of the bill (see the *boot* and *idle* shares above). The scaler can only choose how "
    "many nodes a burst touches and for how long pods stay; it cannot shorten the boot or the "
    "autoscaler's linger.")
add("")
add("**Measured in the simulator:** the oracle (perfect foresight, same sizing rule, same cluster) "
    "is the floor for a policy that sizes like warmpool. Its GPU-h and warmpool's, and both with "
    "the autoscaler's unneeded time and delay-after-add cut to 1 minute (AKS autoscaler profile "
    "`scale-down-unneeded-time=1m`, `scale-down-delay-after-add=1m`; the same change for every "
    "policy):")
add("")
add("| workload | warmpool | oracle | KEDA cd300 | warmpool, CA 1 min | oracle, CA 1 min "
    "| KEDA cd300, CA 1 min | saving vs KEDA, CA 1 min |")
add("|---|---|---|---|---|---|---|---|")
for w in WORKLOADS:
    b, c = base[w], ca1m[w]
    if not c:
        continue
    add(f"| {w} | {mmm([p['billedGpuHours'] for p in b['warmpool']])} "
        f"| {mmm([p['billedGpuHours'] for p in b['oracle']])} "
        f"| {mmm([p['billedGpuHours'] for p in b['keda-redis-cd300']])} "
        f"| {mmm([p['billedGpuHours'] for p in c['warmpool']])} "
        f"| {mmm([p['billedGpuHours'] for p in c['oracle']])} "
        f"| {mmm([p['billedGpuHours'] for p in c['keda-redis-cd300']])} "
        f"| {mmm([100 * x for x in saving(c)], '{:.0f}')} % |")
add("")
if w1task:
    add("**W1 and the duration of the first burst.** A monthly batch arrives with no history: until "
        "the first tasks finish, warmpool does not know how long a task takes, so it assumes "
        "`drainSeconds` / 5 per task and asks for one replica per 5 pending tasks (capped at "
        "`maxReplicas`), as KEDA's `listLength 5` does: 5,000 tasks ask for every one of the 100 "
        "GPU nodes. Telling it the duration (`taskSeconds: 1.3` in the ScaledObject) lets it drain "
        "the burst with fewer nodes; a tighter drain than the default 150 s trades that saving for "
        "p95 wait, and as on W2 no single value meets both targets on every seed (105 s misses the "
        "saving on one seed, 110 s the p95 on another). The oracle stays far below because it "
        "knows *when* the batch comes and boots a small pool ahead of it; a monthly batch gives a "
        "learned pre-warm nothing to learn from in one month:")
    add("")
    add("| W1 | GPU-h | wait p95 | saving vs KEDA cd300 | p95 vs KEDA | / oracle |")
    add("|---|---|---|---|---|---|")
    for label, pols in (("warmpool, defaults", base["W1"]),
                        ("warmpool, `taskSeconds: 1.3`", w1task),
                        ("warmpool, `taskSeconds: 1.3`, `drainSeconds: 105`", w1taskdrain[105]),
                        ("warmpool, `taskSeconds: 1.3`, `drainSeconds: 110`", w1taskdrain[110])):
        if not pols:
            continue
        add(f"| {label} | {mmm([p['billedGpuHours'] for p in pols['warmpool']])} "
            f"| {mmm([p['waitP95'] for p in pols['warmpool']], '{:.0f}')} "
            f"| {mmm([100 * x for x in saving(pols)], '{:.0f}')} % "
            f"| {mmm(p95_delta(pols), '{:+.0f}')} s "
            f"| {mmm(ratio(pols), '{:.2f}')}× |")
    add("")
if all(w2drain.values()) and all(w4drain.values()):
    add("**W2 and the latency budget.** W2's spikes arrive cold (heavy-tailed gaps of hours, beyond "
        "any keep-alive worth paying for and too wide for the learned pre-warm), so their wait is "
        "a cold start plus the drain, and every node a spike touches bills its boot and the "
        "autoscaler's linger. `drainSeconds` (default `auto` = 150 s) is the one knob between the "
        "two targets: a shorter drain buys the p95 back with nodes (KEDA's `listLength 5` gives "
        "each spike one pod per 5 tasks). `drainSeconds: 80` meets both W2 targets on every seed. "
        "The same knob sets the warm pool W4 pre-warms and the nodes added when a batch outgrows "
        "it (a batch drains within a cold start + `drainSeconds`), and W4 meets its targets only "
        "with the longer drain (below 150 s its GPU-h pass 1.25× the oracle's on some seed, and at "
        "80 s its saving falls short of 40 % on some), so no default serves both; the default stays at "
        "`coldStartSeconds / 2` (W1, W3 and W5 barely move with it), and a ScaledObject serving "
        "W2-like traffic sets `drainSeconds: 80`:")
    add("")
    add("| W2 | GPU-h | wait p95 | saving vs KEDA cd300 | p95 vs KEDA "
        "| W4 with the same setting: saving vs KEDA cd300 | W4: / oracle |")
    add("|---|---|---|---|---|---|---|")
    for label, pols, pols4 in (("warmpool, `drainSeconds: auto` (150 s)", base["W2"], base["W4"]),
                               ("warmpool, `drainSeconds: 120`", w2drain[120], w4drain[120]),
                               ("warmpool, `drainSeconds: 80`", w2drain[80], w4drain[80]),
                               ("warmpool, `drainSeconds: 60`", w2drain[60], w4drain[60])):
        add(f"| {label} | {mmm([p['billedGpuHours'] for p in pols['warmpool']])} "
            f"| {mmm([p['waitP95'] for p in pols['warmpool']], '{:.0f}')} "
            f"| {mmm([100 * x for x in saving(pols)], '{:.0f}')} % "
            f"| {mmm(p95_delta(pols), '{:+.0f}')} s "
            f"| {mmm([100 * x for x in saving(pols4)], '{:.0f}')} % "
            f"| {mmm(ratio(pols4), '{:.2f}')}× |")
    add("")
    add("A sweep on 2026-11-30 (`warmpool-sim run --workload W2 --seed N --meta "
        "drainSeconds=D`, seeds 1-5): D = 70 s misses the saving on 4 seeds, D = 85-90 s the p95 "
        "on 3-4 seeds; on W4, D = 100 s misses 40 % on 1 seed, and D = 110 s and 120 s pass 1.25× "
        "the oracle on 3 and 2 seeds. What makes "
        "W2's curve steep is the boot-time tail (median 240 s, p95 600 s): the first of the few "
        "nodes a lean pool asks for is ready later than the first of KEDA's many, and the nodes "
        "that arrive early drain the spike before the late ones are ready, yet each late node "
        "still bills its boot and the autoscaler's linger.")
    if notail:
        add(" ".join([
            "Measured: the same cluster with boots that have no tail (every VM boots in the median "
            "240 s and every driver installs in the median 90 s: `--cluster vmBootP95=240 "
            "--cluster driverP95=90`, every policy alike) brings warmpool's W2 p95 to",
            f"{mmm(p95_delta(notail), '{:+.0f}')} s above KEDA's (saving",
            f"{mmm([100 * x for x in saving(notail)], '{:.0f}')} %), from",
            f"{mmm(p95_delta(base['W2']), '{:+.0f}')} s with the tail: the tail, not the sizing "
            "rule, is most of the gap. GPU nodes that start quickly and evenly are the cluster "
            "setting that moves it (for example AKS `--scale-down-mode Deallocate`, which starts "
            "stopped VMs, their images cached, instead of creating new ones; replay with your "
            "pool's measured boot times through `--cluster`)."]))
    add("")
    add("The oracle knows when each W2 spike comes and boots a lean pool one cold start ahead, so "
        "its spikes land warm for a third of warmpool's GPU-hours; a policy without that foresight pays "
        "the cold start inside every spike after an unpredictable gap. The 1.6× goal is the "
        "randomized ski-rental bound, which covers the keep-alive choice (stay warm or not), not "
        "that cold start. What moves it is the cluster: with fast GPU nodes (standby VMs that "
        "resume in ~35 s, driver and image already on the node: `--cluster vmBootMedian=35 "
        "--cluster vmBootP95=60 --cluster driverMedian=5 --cluster driverP95=10 --cluster "
        "imagePullSeconds=5`, for every policy alike, warmpool's ScaledObject unchanged):")
    add("")
    add("| fast nodes | saving vs KEDA cd300 | p95 vs KEDA | warmpool / oracle |")
    add("|---|---|---|---|")
    for w in ("W2", "W4"):
        f = fast.get(w)
        if f:
            add(f"| {w} | {mmm([100 * x for x in saving(f)], '{:.0f}')} % "
                f"| {mmm(p95_delta(f), '{:+.0f}')} s | {mmm(ratio(f), '{:.2f}')}× |")
    add("")
    beaten = [w for w in ("W2", "W4") if fast.get(w) and min(ratio(fast[w])) < 1]
    add("The ratio to the oracle falls, but KEDA's wait falls with the boot time while warmpool "
        "still sizes and pre-warms for its configured `coldStartSeconds: 300`. Lowering that "
        "setting is not a free win either: on W4 with `coldStartSeconds: 90` on these fast nodes "
        "`drainSeconds: auto` becomes 45 s, a latency target tighter than KEDA delivers, and it "
        "billed more than KEDA (seed 1: 215 against 154 GPU-h, p95 155 s against 292 s). "
        "warmpool's defaults are tuned for boots of minutes; on "
        "a cluster this fast, replay the workload with the cluster's own numbers (`--cluster`) "
        "before choosing `coldStartSeconds` and `drainSeconds`."
        + (f" On {', '.join(beaten)} warmpool bills below the oracle on some seed: the oracle is "
           "the cheapest of its fourteen clairvoyant strategies (below), tuned for boots of "
           "minutes, not a proven optimum, so on a cluster this fast it is no longer a floor."
           if beaten else ""))
    add("")
w4 = base["W4"]
w4_seed1 = [r for r in load("base", "W4") if r["seed"] == 1]
if w4_seed1:
    wp1 = {p["policy"]: p for p in w4_seed1[0]["policies"]}["warmpool"]
    step = (wp1["timeline"][1][0] - wp1["timeline"][0][0]) if len(wp1["timeline"]) > 1 else 60
    first = sum(r[5] for r in wp1["timeline"] if r[0] < 6 * 3600) * step / 3600
    or1 = {p["policy"]: p for p in w4_seed1[0]["policies"]}["oracle"]

    def node_hours_after(p, t0):  # sampled node count x step, from t0 on
        return sum(r[5] for r in p["timeline"] if r[0] >= t0) * step / 3600

    later = node_hours_after(wp1, 6 * 3600) / max(1e-9, node_hours_after(or1, 6 * 3600))
    add("**W4 and the oracle.** The oracle knows every batch and its durations, so from the first "
        "hour on it has a pool of 2–3 pods ready as each batch lands. warmpool has to learn: the "
        "first batch arrives with no duration estimate (sized as KEDA's `listLength 5` until its "
        "first tasks finish), the next ones are cold bursts until 3 gaps make the histogram "
        "representative "
        f"(on seed 1 the first 6 h bill {first:.0f} of warmpool's "
        f"{wp1['billedGpuHours']:.0f} GPU-h), its pre-warmed pool boots one learned cold start "
        "ahead of the 5th-percentile gap and waits for the batch, and the measured duration "
        "moves with each batch's long tasks. Once a batch runs on its pre-warmed pool, a node "
        "added for its tail must have at least a cold start's worth of work: before that rule "
        "the largest batches booted nodes that were still booting when the pool had drained the "
        "batch (seed 1, hour 53: 5 nodes that ran no task and billed ~20 minutes each), and over "
        "seeds 1-10 warmpool billed 1.20-1.38× the oracle (now 1.10-1.23×, p95 wait still within "
        "60 s of KEDA's on every seed). From the 6th hour on, seed 1 bills "
        f"{later:.2f}× the oracle's node-hours (from its 60 s timeline), so over a longer run "
        "than these 3 days the ratio tends there. The same workload with the autoscaler's linger "
        "cut to 1 minute (table above) shows how much of the rest is per-node overhead.")
    add("")
add("**Where KEDA's baseline is cheaper.** On steady work (W3, W5) KEDA's `listLength 5` keeps "
    "about five queued tasks per pod: its pool is smaller than the work needs, so the queue and "
    "the wait grow (p50 in minutes on W5) while it bills less; and because LLEN does not see "
    "running tasks, its HPA and cooldown terminate busy pods (the *killed* column: those tasks run "
    "again from the start). The billed time of any policy that does not make tasks wait is "
    "bounded below by the work itself (busy GPU-hours) plus the per-node overhead above, so a 40 % "
    "saving against a pool that is already mostly busy and under-sized is out of reach by "
    "construction; warmpool spends those GPU-hours on a p95 wait of seconds instead of minutes and "
    "no killed tasks. On W4 (hourly batches of 20–50 tasks of ~40 s) KEDA's `listLength 5` "
    "asks for 4–10 pods per batch and lets the batch wait a full cold start (p50 "
    f"{med([p['waitP50'] for p in w4['keda-redis-cd300']]):.0f} s); warmpool's learned pre-warm "
    "has a pool of 2–3 pods ready when most batches arrive, sized to drain the batch within a "
    f"cold start + `drainSeconds` (p50 {med([p['waitP50'] for p in w4['warmpool']]):.0f} s), and "
    "adds a node for a larger batch only when it would run at least a cold start's worth of it "
    "(`warmpool-prewarm-off` shows the same policy without the pre-warm). Either way each batch "
    "touches GPU nodes that each bill boot + ~11 minutes of autoscaler linger, which is what the "
    "*CA 1 min* column moves.")
add("")

add("## The policy (what `Decide` does)")
add("")
add("""Pure functions in `policy/` (no I/O, no clock reads), called by the scaler and by the simulator:
`state = Observe(state, spec, observation, now)` once per fresh observation, then
`Decide(spec, observation, state, now)`. Rules, in order (`policy/warm_policy.h`):

1. **Work** (`pending + in_flight > activationBacklog`): active, sized by the
   **cold-start-aware rule** (`DrainSlots`) from the task duration `S` (measured: the plain mean
   of the first 33 tasks, then a per-task EWMA of weight 0.03; `taskSeconds`, when set, weighs as
   33 measured tasks). Until any task has finished, `S` is assumed to be `drainSeconds / 5`
   (one replica per 5 pending tasks, what KEDA's `listLength 5` asks) or the age of the
   longest-running task, whichever is longer, so a first burst of long tasks grows its pool as
   they run instead of a cold start after the first one finishes. A replica asked for now
   arrives a cold start `c` later (`c = max(coldStartSeconds, measured cold start)`), so until
   then only the `r` running
   slots work (or the pre-warmed pool a burst landed on, counted as running while it starts).
   Work keeps arriving at `a` slots (arrival rate from a 1-hour decaying count of new tasks × `S`;
   within the first `c + d` of a busy period the rate from before it, since those arrivals are the
   burst itself). With the waiting work `w = pending × S` and `d = drainSeconds` (default `auto` =
   `coldStartSeconds / 2`), the new slots are
   `x = floor((w − max(0, r − a) × (c + d)) / d)`: none while the running ones finish the
   backlog within `c + d` anyway, and only whole replicas that each have at least `d` of work
   when they arrive (a node's boot and linger cost far more than a fraction of `d`); once a
   burst runs on the pool pre-warmed for it, each new one needs at least `max(d, c)` of work
   (a node that works less than its own cold start costs more than the tail it shortens).
   A cold burst (nothing running, younger than `c`) is sized for the larger of what is visible and the typical
   burst (EWMA of busy-period peaks), since its tail arrives during the cold start anyway. At
   least 1 replica, never more than one slot per task.
2. **Safety**: never fewer replicas than in-flight tasks need, never inactive while anything runs
   (KEDA's LLEN-only scaler does both: the *killed* column).
3. **Warm floor**: `minWarmReplicas` and `warmWindows` (`Mon-Fri 07:00-19:00 UTC=2`).
4. **ETA pre-warm**: tasks with a future eta are known future work: active one pre-warm lead before
   the earliest.
5. **Keep-alive** after work ends: `keepAlive: N`, or `auto` = ski-rental break-even: stay warm for
   as long as one cold start costs, `B = coldStartSeconds × (1 + waitCostPerHour /
   replicaCostPerHour × expected burst)`. The node a pod leaves stays billed for the autoscaler's
   `nodeUnneededSeconds` anyway and a come-back within it costs only a pod start, so `auto` keeps
   pods for `max(0, B − nodeUnneededSeconds)` — unless the gap histogram says the next burst is
   likely (≥ 50 %, given the time the last burst already took) within `B`, then for up to `B`.
6. **Learned pre-warm** (Shahrad et al., ATC 2020): gaps between bursts in 1-minute bins over 4 h,
   measured start to start (Shahrad bins idle time from the end of work; here a busy period
   includes our own cold start, so end-to-start gaps would move with the policy's own success).
   Once ≥ 3 gaps are recorded (at most half beyond 4 h) and the 5th–99th percentile spread is
   sharp (≤ max(B, head/2)), the pool scales to zero after work and becomes active again one
   pre-warm lead before the 5th percentile (`head`) after the last burst started, staying until
   the 99th percentile + 10 %. The lead is
   `max(coldStartSeconds, measured cold start)`; `Observe` measures cold starts as the wait from
   work appearing to the first running task when it exceeds `coldStartSeconds / 2`, counted from
   the window's opening when the burst landed in the pre-warm window (the pool was asked for
   then). The pre-warmed pool (`PrewarmSlots`) is the fewest slots on which the expected burst
   (`w` = EWMA of busy-period peaks × `S`) needs no new replica by rule 1:
   `floor((w − d) / (c + d)) + 1` — a warm pool skips the cold start, so it has `c + d` to drain
   the burst; without a known duration, one slot per expected task.
7. Otherwise inactive, 0 replicas.
""")

add("## The simulator and every modelling assumption")
add("")
add(f"""`warmpool-sim` (`sim/`) is a discrete-event simulation at 1-second resolution, seeded
(controller phases, node boot and model-load samples; workloads have their own seeded generators).
Each policy of a run sees the same workload and the same cluster settings; randomness is drawn in
the order events happen, so two policies do not see identical boot samples, which is why the tables
report min/median/max over {len(seeds)} seeds.

**Cluster (same for every policy).**
- Node pool: 1 GPU per node ({cluster['gpusPerNode']}), at most {cluster['maxNodes']} nodes,
  ${cluster['pricePerNodeHour']}/node-hour (Azure Standard_NC4as_T4_v3 pay-as-you-go,
  Azure's Linux VM price list). Billed per second from VM creation to the end of deletion
  (Azure meters per second; `--cluster billingMinimumSeconds=60` models EC2's minimum).
- Node boot: VM lognormal (median {cluster['vmBootMedian']:.0f} s, p95 {cluster['vmBootP95']:.0f} s,
  capped at 900 s = the autoscaler's max-node-provision-time; failures and retries are not
  modelled), then GPU driver/device plugin lognormal (median {cluster['driverMedian']:.0f} s,
  p95 180 s) before the GPU is allocatable (§5.1, §9.1).
- Cluster autoscaler: scans every 10 s (random phase); scales up when the oldest unschedulable pod
  is ≥ {cluster['caGpuBufferSeconds']} s old (`unschedulablePodWithGpuTimeBuffer`), for the pods
  that do not fit on nodes already booting, up to the pool maximum; removes a node that has had no
  pods for `scale-down-unneeded-time` ({cluster['caUnneededSeconds']} s), never within
  `scale-down-delay-after-add` ({cluster['caDelayAfterAddSeconds']} s) of a scale-up, at most 10
  empty nodes per scan; deletion takes 60 s (billed). Nodes with pods are never drained (GPU
  workers are not evicted for consolidation).
- Scheduler: a pending pod binds to a ready node with a free GPU (most-allocated first).
- Pod start: image pull {cluster['imagePullSeconds']:.0f} s the first time on a node (10 GB at
  150 MB/s; cached afterwards), then model load uniform 20–90 s (§5.2); then ready.
- Worker: `slotsPerPod` (1) tasks at a time, FIFO from one queue, no prefetch beyond free slots
  (`acks_late`, prefetch multiplier 1). Tasks with an eta are held out of the list until due (as
  in kombu's `unacked` hash: LLEN does not see them).
- ReplicaSet scale-down picks pods as Kubernetes ranks them: unscheduled, then not ready, then
  ready newest first; it does not know which pods are busy. A terminated busy pod gets SIGTERM,
  stops fetching and finishes its task within `terminationGracePeriodSeconds`; a task still
  running at the deadline is killed, counted, redelivered to the head of the queue and run again.

**KEDA and the HPA.**
- KEDA operator: polls `IsActive` every `pollingInterval` (random phase). Active: 0 → 1 replica
  and `lastActiveTime = now`. Inactive: when `lastActiveTime + cooldownPeriod` has passed, straight
  to `minReplicaCount` (0) from any N, bypassing the HPA (`scaleToZeroOrIdle`).
- `external-push`: warmpool's stream is evaluated every second, sends on change and re-sends a
  true every 5 s; a true scales 0 → 1 at once or refreshes `lastActiveTime`; a false is ignored
  (KEDA ≥ 2.18). Polling continues alongside.
- HPA (while replicas ≥ 1): every 15 s (random phase); `AverageValue`:
  `ceil(metric / target)` unless `|metric / (target × current) − 1| ≤ 0.1`; scale-up limited to
  max(+100 %, +4 pods) per 15 s; scale-down to the highest recommendation of the last 300 s
  (stabilisation window), then ≤ 100 % per 15 s; clamped to [max(1, minReplicaCount),
  maxReplicaCount].

**Policies in every run.**
- `warmpool`: the default policy (no metadata beyond the defaults unless `--meta`), deployed as its
  manifests recommend: trigger `external-push`, `pollingInterval: 10`, `cooldownPeriod: 30` (the
  policy's keep-alive owns N → 0), HPA `behavior` left at the Kubernetes defaults (the 300 s
  scale-down window damps churn on steady load), `terminationGracePeriodSeconds: 7200` (longer
  than the longest task; the worker finishes or requeues on SIGTERM).
- `keda-redis-cd300` / `keda-redis-cd60`: KEDA's redis list scaler as users configure it:
  `listLength: 5`, `activationListLength: 0`, `pollingInterval: 30`, `cooldownPeriod` 300 / 60,
  LLEN of the queue only (no in-flight, no priority lists), default HPA behaviour and the
  Kubernetes default termination grace (30 s).
- `keepalive-600`: warmpool's sizing with a fixed 10-minute keep-alive after the queue and in-flight
  both reach zero, no pre-warm (Lambda-style), same deployment as `warmpool`.
- `always-on-1`, `always-on-peak`: a fixed Deployment, warm from t = 0 (bills exactly N × duration);
  peak = the workload's highest ideal concurrency, capped at `maxReplicas`.
- `oracle`: knows every arrival and duration in advance and, with hindsight, keeps the cheapest of
  fourteen clairvoyant strategies on the same run (the *variant* shown in the table): pre-start
  one median cold start ahead or one mean pod start ahead, or look no further than the work in the
  system ("now"), each setting the Deployment directly, holding what it needed in the last 5
  minutes, or going through the same KEDA + HPA as warmpool; each with two sizings: the plain
  drain (one slot per task, or the work that became runnable in the last `drainSeconds` drained
  within it, with the true durations), and *lean* = warmpool's cold-start-aware rule with the
  truth (a pool that is ready when a burst lands, sized to drain it within a median cold start +
  `drainSeconds`; new replicas only for the queued work that the pods it already has — ready, or
  starting with their exact ready time — leave after a median cold start, whole replicas with at
  least `drainSeconds` of work each). It is the floor for a policy that sizes like warmpool (a
  test checks no such policy beats it on W1, W2, W4, W5); it is not a floor for policies that make
  tasks wait longer (KEDA's `listLength 5`, `always-on-1`), which are compared on both axes. Its
  *lean* variants pre-warm exactly sized pools for bursts warmpool cannot predict (W1's single
  batch, W2's heavy-tailed gaps), so the ratio to it is large there.

**Workloads** (`sim/workload.cpp`, seeded):
- W1 monthly batch: 5,000 tasks within 2 minutes (at t = 10 min), durations lognormal (median 1 s,
  p95 3 s); 4 h simulated (one burst and its tail).
- W2 sporadic spikes: clusters of 10–200 requests spread over 1–5 min, gaps between clusters
  lognormal (median 2 h, ~2 % over 24 h), durations lognormal (median 5 s, p95 20 s); 7 days.
- W3 diurnal: non-homogeneous Poisson, peak:trough 2:1 (peak 14:00 UTC), weekend at 60 %, peak
  ≈ 60 busy workers; durations lognormal (median 20 s, p95 60 s); 7 days.
- W4 hourly timer: every 60 ± 3 min a batch of 20–50 tasks within 10 s, durations lognormal
  (median 30 s, p95 90 s); 3 days.
- W5 heavy-tailed durations: W3-shaped arrivals, durations lognormal (median 60 s, σ = 1.5, ~14 %
  longer than 300 s, capped at 2 h) as a stand-in for Alibaba PAI task durations; 3 days.
- Your own traffic: `warmpool-sim record --redis URL --queues q --duration-s 3600 --out q.csv`
  samples pending (LLEN of every priority list) and in-flight delivery tags (`unacked`) and writes
  a workload CSV (`arrival_s,duration_s[,eta_s][,queue]`) for `run --workload q.csv`.

**Not modelled** (each would move absolute numbers, not the comparison): node boot failures and
retries, spot evictions, multi-GPU bin-packing beyond most-allocated, image-pull contention,
Redis or scaler outages, Celery prefetch beyond free slots, per-queue priorities (one FIFO queue),
and KEDA's `useCachedMetrics` (the HPA reads a fresh value every sync).
""")

add("## Recommended ScaledObject settings (what `warmpool` is simulated with)")
add("")
add("""```yaml
spec:
  pollingInterval: 10          # scale-to-zero decisions; 0 -> 1 comes from the push stream
  cooldownPeriod: 30           # the policy's keepAlive decides when to go idle
  minReplicaCount: 0
  maxReplicaCount: 100         # = the maxReplicas metadata key
  triggers:
    - type: external-push
      metadata:
        scalerAddress: warmpool-scaler.warmpool.svc:6000
        queues: gpu
        coldStartSeconds: "300"   # set to your measured node-to-ready time
  # advanced.horizontalPodAutoscalerConfig.behavior: keep the Kubernetes defaults
# Deployment: terminationGracePeriodSeconds >= your longest task (the worker drains on SIGTERM)
```
""")

with open(os.path.join(docs, "SCALING.md"), "w") as f:
    f.write("\n".join(lines))
print(f"wrote {os.path.join(docs, 'SCALING.md')} and docs/img/scaling-W*.png", file=sys.stderr)
PY
