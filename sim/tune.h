#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/sim_config.h"
#include "sim/workload.h"

namespace warmpool::sim {

// The HPA scale-down window (the ScaledObject's advanced.horizontalPodAutoscalerConfig.behavior.
// scaleDown.stabilizationWindowSeconds; warmpool-sim's --scaledobject name), swept next to the
// trigger metadata under this key. It is not trigger metadata: RunTune sets it on the simulated
// ScaledObject and ScaledObjectPatch writes it to its own path.
inline constexpr char kScaleDownWindowKey[] = "scaleDownStabilizationSeconds";

// The most direction reversals per hour a shorter HPA scale-down window may bring a candidate
// to (issue 21's churn bound), unless the same keys with the shipped window already make more.
inline constexpr double kMaxReversalsPerHour = 2;

// The least saving (share of the default's GPU-h, median over the seeds) for which the tuner
// recommends changing a setting rather than keeping the default: the margin docs/SCALING.md
// calls a difference wider than the seeds' noise.
inline constexpr double kMinSaving = 0.02;

// One configuration judged over several seeds: median billed GPU-h, median p95 queue wait, the
// most tasks any seed killed or requeued at scale-in (a configuration "kills nothing" only if no
// seed did), and the median direction reversals of the replica count per hour.
struct TunePoint {
  std::string name;
  double gpu_h = 0;
  double p95 = 0;
  int64_t killed = 0;
  double reversals = 0;
  std::map<std::string, std::string> meta;  // warmpool: the swept metadata and HPA window
  // Tie-break among equal figures: the number of swept keys that differ from the default
  // candidate (so a change is recommended only where it pays). 0 for KEDA points.
  int64_t distance = 0;
  int64_t ties = 0;  // ParetoFront: other points with the same figures left out for this one
  // Aggregate: GPU-h and p95 on each seed, in seed order (empty for a point built directly).
  std::vector<double> seed_gpu_h, seed_p95;
};

// a no worse than b on GPU-h, p95 and kills, and better on one. Pure.
bool Dominates(const TunePoint& a, const TunePoint& b);

// The points that kill nothing and that no other such point dominates, by GPU-h ascending; of
// points with equal GPU-h, p95 and kills only the one with the lowest distance (then name) is
// kept, its `ties` counting the others. Pure.
std::vector<TunePoint> ParetoFront(const std::vector<TunePoint>& points);

// The cheapest point (GPU-h; ties: p95, distance, then name) with p95 <= p95_limit that kills
// nothing; nullptr when none. Pure.
const TunePoint* CheapestAtSlo(const std::vector<TunePoint>& points, double p95_limit);

// a's p95 minus b's: the median of the per-seed differences when both ran on the same seeds,
// else the difference of the medians. Every configuration of one seed meets the same node boots
// and model loads (common random numbers), so one seed's difference is the configurations'
// decisions; the two medians alone can pit one's lucky seed against the other's unlucky one.
// Pure.
double P95Difference(const TunePoint& a, const TunePoint& b);

// a's GPU-h / b's: the median of the per-seed ratios when both ran on the same seeds, else the
// ratio of the medians. Pure.
double GpuHoursRatio(const TunePoint& a, const TunePoint& b);

// The cheapest point (as CheapestAtSlo) that kills nothing and waits no longer at p95 than `ref`,
// seed by seed (P95Difference <= 0); nullptr when none. Pure.
const TunePoint* CheapestNoSlowerThan(const std::vector<TunePoint>& points, const TunePoint& ref);

// Median GPU-h, p95 and reversals, max kills + requeues of one configuration's per-seed results.
// Pure.
struct SeedFigures {
  double gpu_h = 0;
  double p95 = 0;
  int64_t killed = 0;
  double reversals = 0;  // per hour
};
TunePoint Aggregate(const std::string& name, const std::vector<SeedFigures>& per_seed);

// warmpool's keys the tuner sweeps, over `base` (the user's --meta): targetWaitSeconds =
// coldStartSeconds x {1.1, 1.25, 1.5, 2, 3, 4} (rounded) x prewarm histogram/off x forecast
// shadow/on x keepAlive auto/120/600/1800 (up to twice the longest cooldownPeriod of the KEDA
// grid) x, when `task_seconds` > 0 and `base` states none, taskSeconds unset/`task_seconds` (the
// workload's own mean duration: what a fresh scaler does not know before its first tasks end) x
// the HPA scale-down window (kScaleDownWindowKey) as shipped/300 (Kubernetes' default)/60: while
// the policy holds a pod warm after a burst, the HPA keeps the burst's whole pool for its window.
// drainSeconds is dropped (it and targetWaitSeconds are exclusive). Pure.
std::vector<std::map<std::string, std::string>> WarmpoolCandidates(
    const std::map<std::string, std::string>& base, int64_t cold_start_s, double task_seconds = 0);

// The mean task duration of a workload (0 without tasks). Pure.
double MeanTaskSeconds(const Workload& w);

// The candidate that stands for "as shipped" among WarmpoolCandidates: targetWaitSeconds 1.5 x
// coldStartSeconds (the `auto` rule), prewarm histogram, forecast shadow, keepAlive auto, the
// shipped HPA scale-down window.
std::map<std::string, std::string> DefaultCandidate(const std::map<std::string, std::string>& base,
                                                    int64_t cold_start_s);

// How many swept keys of `meta` differ from `reference`. Pure.
int64_t SweptDistance(const std::map<std::string, std::string>& meta,
                      const std::map<std::string, std::string>& reference);

// "T450 prewarm=histogram forecast=shadow keepAlive=auto" (+ " taskSeconds=S" when set, +
// " scaleDownWindow=W" when not the shipped window). Pure.
std::string CandidateName(const std::map<std::string, std::string>& meta);

// A kustomize JSON6902 patch (YAML list of `add` ops) setting the swept keys on manifests/base's
// ScaledObject warmpool-worker: trigger 0's metadata as quoted strings, and the HPA scale-down
// window, when not the shipped one, as an integer. Pure.
std::string ScaledObjectPatch(const std::map<std::string, std::string>& meta);

// The `patches:` entry of a kustomization that applies ScaledObjectPatch from `patch_path`. Pure.
std::string KustomizationEntry(const std::string& patch_path);

// The most seeds `tune --seeds` takes.
inline constexpr int64_t kMaxTuneSeeds = 100;

struct TuneOptions {
  // The workload of a seed (generators depend on it; a CSV does not).
  std::function<Status(uint64_t seed, Workload* out)> load;
  std::map<std::string, std::string> meta;  // the user's --meta
  ClusterConfig cluster;
  double slo_p95 = -1;  // --slo p95=S; < 0: the default candidate's p95
  int64_t seeds = 3;    // 1..kMaxTuneSeeds
  int64_t jobs = 1;     // simulations run in parallel (threads)
};

struct TuneResult {
  std::string workload;
  double slo_p95 = 0;
  bool slo_given = false;
  std::vector<TunePoint> warmpool;  // every candidate
  std::vector<TunePoint> keda;      // every grid configuration
  std::vector<TunePoint> front;     // ParetoFront(warmpool)
  TunePoint default_point;
  TunePoint recommended;
  bool slo_met = false;  // recommended.p95 <= slo
  bool keda_found = false;
  TunePoint keda_best;           // CheapestNoSlowerThan(keda, recommended)
  double cost_at_equal_slo = 0;  // GpuHoursRatio(recommended, keda_best) when keda_found
};

// The candidates a recommendation may come from: all but those whose HPA window, shorter than
// the shipped one, makes them reverse more than max(kMaxReversalsPerHour, the same keys with the
// shipped window) times an hour. A shorter window trades idle pods for churn; the tuner takes it
// only within the bound. (Scaling to zero between sparse calls reverses twice a call whatever
// the window: that is not held against the other keys.) Pure.
std::vector<TunePoint> WithinChurnBound(const std::vector<TunePoint>& candidates);

// Simulates every candidate and the KEDA grid (sim/keda_grid.h) on seeds 1..N and picks, among
// WithinChurnBound (the front holds only those): recommended = the cheapest candidate meeting the
// SLO (no SLO: the default candidate's p95; the default itself when it meets the SLO and the
// cheapest saves no more than kMinSaving), else the lowest-p95 one that kills nothing; keda_best =
// the cheapest grid configuration that kills nothing and waits no longer than the recommendation,
// seed by seed. Progress goes to `log`.
Status RunTune(const TuneOptions& options, std::ostream& log, TuneResult* out);

// The report: front, recommendation, KEDA at the same SLO, cost at equal SLO, the patch. Pure.
std::string TuneReportTable(const TuneResult& r, const std::string& patch_path);
std::string TuneReportJson(const TuneResult& r);

}  // namespace warmpool::sim
