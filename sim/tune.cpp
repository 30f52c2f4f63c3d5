#include "sim/tune.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <thread>
#include <tuple>

#include "sim/keda_grid.h"
#include "sim/policy_spec.h"
#include "sim/shipped_settings.h"
#include "sim/simulator.h"

namespace warmpool::sim {
namespace {

bool Cheaper(const TunePoint& a, const TunePoint& b) {
  return std::tie(a.gpu_h, a.p95, a.distance, a.name) <
         std::tie(b.gpu_h, b.p95, b.distance, b.name);
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

constexpr const char* kSweptKeys[] = {"targetWaitSeconds", "prewarm",     "forecast",
                                      "keepAlive",         "taskSeconds", kScaleDownWindowKey};

const std::string kShippedWindow = std::to_string(shipped::kScaleDownStabilizationS);
constexpr const char* kNodeUnneededKey = "nodeUnneededSeconds";

std::map<std::string, std::string> Swept(const std::map<std::string, std::string>& meta) {
  std::map<std::string, std::string> out;
  for (const char* k : kSweptKeys) {
    if (auto it = meta.find(k); it != meta.end()) out[k] = it->second;
  }
  return out;
}

std::string Get(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? "" : it->second;
}

// Simulates every spec on every workload (seed i + 1) on `jobs` threads (Simulate is pure);
// figures[spec][seed]. The first error wins.
Status SimulateAll(const std::vector<PolicySpec>& specs, const std::vector<Workload>& workloads,
                   const ClusterConfig& cluster, int64_t jobs, std::ostream& log,
                   std::vector<std::vector<SeedFigures>>* figures) {
  const size_t seeds = workloads.size(), total = specs.size() * seeds;
  figures->assign(specs.size(), std::vector<SeedFigures>(seeds));
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t done = 0;
  Status first_error = Status::Ok();
  auto work = [&] {
    for (size_t job; (job = next.fetch_add(1)) < total;) {
      const size_t spec = job / seeds, seed = job % seeds;
      SimResult r;
      Status s = Simulate(workloads[seed], specs[spec], cluster, seed + 1, 0, &r);
      SeedFigures& f = (*figures)[spec][seed];
      f.gpu_h = r.billed_gpu_hours;
      f.p95 = r.wait_p95;
      f.killed = r.killed_tasks + r.requeued_tasks;
      f.reversals = r.reversals_per_hour;
      std::lock_guard<std::mutex> lock(mu);
      if (!s.ok() && first_error.ok()) first_error = s;
      if (++done % 24 == 0 || done == total) {
        log << "warmpool-sim tune: " << done << "/" << total << " runs simulated\n" << std::flush;
      }
    }
  };
  const auto threads = static_cast<size_t>(std::clamp<int64_t>(jobs, 1, 256));
  std::vector<std::thread> pool;
  for (size_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return first_error;
}

}  // namespace

bool Dominates(const TunePoint& a, const TunePoint& b) {
  const bool no_worse = a.gpu_h <= b.gpu_h && a.p95 <= b.p95 && a.killed <= b.killed;
  const bool better = a.gpu_h < b.gpu_h || a.p95 < b.p95 || a.killed < b.killed;
  return no_worse && better;
}

std::vector<TunePoint> ParetoFront(const std::vector<TunePoint>& points) {
  std::vector<TunePoint> front;
  for (const auto& p : points) {
    if (p.killed != 0) continue;
    const bool dominated = std::any_of(points.begin(), points.end(), [&](const TunePoint& q) {
      return q.killed == 0 && Dominates(q, p);
    });
    if (!dominated) front.push_back(p);
  }
  std::sort(front.begin(), front.end(), Cheaper);
  std::vector<TunePoint> distinct;
  for (auto& p : front) {
    if (!distinct.empty() && distinct.back().gpu_h == p.gpu_h && distinct.back().p95 == p.p95) {
      ++distinct.back().ties;
    } else {
      distinct.push_back(std::move(p));
    }
  }
  return distinct;
}

const TunePoint* CheapestAtSlo(const std::vector<TunePoint>& points, double p95_limit) {
  const TunePoint* best = nullptr;
  for (const auto& p : points) {
    if (p.killed != 0 || p.p95 > p95_limit) continue;
    if (!best || Cheaper(p, *best)) best = &p;
  }
  return best;
}

double P95Difference(const TunePoint& a, const TunePoint& b) {
  if (a.seed_p95.empty() || a.seed_p95.size() != b.seed_p95.size()) return a.p95 - b.p95;
  std::vector<double> d;
  for (size_t i = 0; i < a.seed_p95.size(); ++i) d.push_back(a.seed_p95[i] - b.seed_p95[i]);
  return Median(d);
}

double GpuHoursRatio(const TunePoint& a, const TunePoint& b) {
  if (a.seed_gpu_h.empty() || a.seed_gpu_h.size() != b.seed_gpu_h.size()) {
    return b.gpu_h > 0 ? a.gpu_h / b.gpu_h : 0;
  }
  std::vector<double> r;
  for (size_t i = 0; i < a.seed_gpu_h.size(); ++i) {
    r.push_back(b.seed_gpu_h[i] > 0 ? a.seed_gpu_h[i] / b.seed_gpu_h[i] : 0);
  }
  return Median(r);
}

const TunePoint* CheapestNoSlowerThan(const std::vector<TunePoint>& points, const TunePoint& ref) {
  const TunePoint* best = nullptr;
  for (const auto& p : points) {
    if (p.killed != 0 || P95Difference(p, ref) > 0) continue;
    if (!best || Cheaper(p, *best)) best = &p;
  }
  return best;
}

TunePoint Aggregate(const std::string& name, const std::vector<SeedFigures>& per_seed) {
  TunePoint t;
  t.name = name;
  std::vector<double> reversals;
  for (const auto& f : per_seed) {
    t.seed_gpu_h.push_back(f.gpu_h);
    t.seed_p95.push_back(f.p95);
    t.killed = std::max(t.killed, f.killed);
    reversals.push_back(f.reversals);
  }
  t.gpu_h = Median(t.seed_gpu_h);
  t.p95 = Median(t.seed_p95);
  t.reversals = Median(std::move(reversals));
  return t;
}

std::vector<std::map<std::string, std::string>> WarmpoolCandidates(
    const std::map<std::string, std::string>& base, int64_t cold_start_s, double task_seconds) {
  std::map<std::string, std::string> common = base;
  common.erase("drainSeconds");
  std::vector<std::string> stated = {""};  // "": taskSeconds left as the user's --meta has it
  if (task_seconds > 0 && !base.count("taskSeconds")) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", task_seconds);
    stated.emplace_back(buf);
  }
  std::vector<std::map<std::string, std::string>> out;
  for (double factor : {1.1, 1.25, 1.5, 2.0, 3.0, 4.0}) {
    const auto target = static_cast<int64_t>(std::lround(factor * double(cold_start_s)));
    for (const char* prewarm : {"histogram", "off"}) {
      for (const char* forecast : {"shadow", "on"}) {
        for (const char* keep : {"auto", "120", "600", "1800"}) {
          for (const std::string& task : stated) {
            for (const std::string& window :
                 {kShippedWindow, std::string("300"), std::string("60")}) {
              auto m = common;
              m["targetWaitSeconds"] = std::to_string(std::max<int64_t>(target, 1));
              m["prewarm"] = prewarm;
              m["forecast"] = forecast;
              m["keepAlive"] = keep;
              if (!task.empty()) m["taskSeconds"] = task;
              m[kScaleDownWindowKey] = window;
              out.push_back(std::move(m));
            }
          }
        }
      }
    }
  }
  return out;
}

double MeanTaskSeconds(const Workload& w) {
  double sum = 0;
  for (const Task& t : w.tasks) sum += t.duration_s;
  return w.tasks.empty() ? 0 : sum / static_cast<double>(w.tasks.size());
}

std::map<std::string, std::string> DefaultCandidate(const std::map<std::string, std::string>& base,
                                                    int64_t cold_start_s) {
  auto m = base;
  m.erase("drainSeconds");
  m["targetWaitSeconds"] = std::to_string(std::lround(1.5 * double(cold_start_s)));
  m["prewarm"] = "histogram";
  m["forecast"] = "shadow";
  m["keepAlive"] = "auto";
  m[kScaleDownWindowKey] = kShippedWindow;
  return m;
}

int64_t SweptDistance(const std::map<std::string, std::string>& meta,
                      const std::map<std::string, std::string>& reference) {
  int64_t d = 0;
  for (const char* k : kSweptKeys) d += Get(meta, k) != Get(reference, k) ? 1 : 0;
  return d;
}

std::string CandidateName(const std::map<std::string, std::string>& meta) {
  std::string s = "T";
  s.append(Get(meta, "targetWaitSeconds"));
  s.append(" prewarm=").append(Get(meta, "prewarm"));
  s.append(" forecast=").append(Get(meta, "forecast"));
  s.append(" keepAlive=").append(Get(meta, "keepAlive"));
  if (const std::string task = Get(meta, "taskSeconds"); !task.empty()) {
    s.append(" taskSeconds=").append(task);
  }
  if (const std::string window = Get(meta, kScaleDownWindowKey);
      !window.empty() && window != kShippedWindow) {
    s.append(" scaleDownWindow=").append(window);
  }
  return s;
}

std::string ScaledObjectPatch(const std::map<std::string, std::string>& meta) {
  std::string s =
      "# JSON6902 patch for manifests/base's ScaledObject warmpool-worker (warmpool-sim tune).\n";
  for (const auto& [k, v] : Swept(meta)) {
    if (k == kScaleDownWindowKey) {
      if (v == kShippedWindow) continue;  // manifests/base already has it
      s.append("- op: add\n  path: /spec/advanced/horizontalPodAutoscalerConfig/behavior/");
      s.append("scaleDown/stabilizationWindowSeconds\n  value: ").append(v).append("\n");
      // The scaler cannot read the HPA's window; the metadata tells the policy (KeepsAlive).
      s.append("- op: add\n  path: /spec/triggers/0/metadata/scaleDownWindowSeconds\n");
      s.append("  value: \"").append(v).append("\"\n");
      continue;
    }
    s.append("- op: add\n  path: /spec/triggers/0/metadata/").append(k).append("\n");
    s.append("  value: \"").append(v).append("\"\n");
  }
  // Replayed on a cluster whose autoscaler keeps empty nodes for another time (--cluster
  // caUnneededSeconds), the policy was told that time; the deployment must say it too.
  if (const std::string unneeded = Get(meta, kNodeUnneededKey);
      !unneeded.empty() && unneeded != shipped::TriggerMetadata().at(kNodeUnneededKey)) {
    s.append("- op: add\n  path: /spec/triggers/0/metadata/").append(kNodeUnneededKey);
    s.append("\n  value: \"").append(unneeded).append("\"\n");
  }
  return s;
}

std::string KustomizationEntry(const std::string& patch_path) {
  std::string s = "patches:\n  - path: ";
  s.append(patch_path);
  s.append("\n    target:\n      group: keda.sh\n      version: v1alpha1\n");
  s.append("      kind: ScaledObject\n      name: warmpool-worker\n");
  return s;
}

std::vector<TunePoint> WithinChurnBound(const std::vector<TunePoint>& candidates) {
  std::map<std::string, double> shipped_reversals;  // by name, the shipped-window candidates
  for (const auto& t : candidates) {
    if (Get(t.meta, kScaleDownWindowKey) == kShippedWindow) shipped_reversals[t.name] = t.reversals;
  }
  std::vector<TunePoint> out;
  for (const auto& t : candidates) {
    const std::string window = Get(t.meta, kScaleDownWindowKey);
    if (!window.empty() && window != kShippedWindow) {
      auto twin = t.meta;
      twin[kScaleDownWindowKey] = kShippedWindow;
      const auto it = shipped_reversals.find(CandidateName(twin));
      const double bound =
          std::max(kMaxReversalsPerHour, it == shipped_reversals.end() ? 0.0 : it->second);
      if (t.reversals > bound) continue;
    }
    out.push_back(t);
  }
  return out;
}

Status RunTune(const TuneOptions& o, std::ostream& log, TuneResult* out) {
  // Each seed holds its own copy of the workload and ~1,200 simulations: a hundred is far past
  // what the medians need, and a hostile count must not exhaust memory.
  if (o.seeds < 1 || o.seeds > kMaxTuneSeeds) {
    return Status::InvalidArgument("--seeds must be from 1 to " + std::to_string(kMaxTuneSeeds));
  }
  std::vector<Workload> workloads(static_cast<size_t>(o.seeds));
  for (int64_t i = 0; i < o.seeds; ++i) {
    if (Status s = o.load(uint64_t(i + 1), &workloads[size_t(i)]); !s.ok()) return s;
  }
  const Workload& w0 = workloads[0];
  TuneResult r;
  r.workload = w0.name;
  int64_t cold = 300;
  if (auto it = o.meta.find("coldStartSeconds"); it != o.meta.end()) {
    char* end = nullptr;
    cold = std::strtoll(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0' || cold < 1) {
      return Status::InvalidArgument("--meta coldStartSeconds=" + it->second +
                                     ": want whole seconds >= 1");
    }
  }
  const std::vector<PolicySpec> defaults = DefaultPolicies(o.meta, w0, o.cluster);
  const auto shipped = std::find_if(defaults.begin(), defaults.end(),
                                    [](const PolicySpec& p) { return p.name == "warmpool"; });
  if (shipped == defaults.end()) return Status::InvalidArgument("no warmpool policy to tune");
  const PolicySpec base = *shipped;  // warmpool as manifests/base ships it, with the user's --meta
  const auto candidates = WarmpoolCandidates(base.meta, cold, MeanTaskSeconds(w0));
  const auto default_meta = DefaultCandidate(base.meta, cold);
  const std::vector<PolicySpec> grid = KedaGrid(w0, o.cluster);
  std::vector<PolicySpec> specs;
  for (const auto& meta : candidates) {
    PolicySpec spec = base;
    spec.meta = meta;
    if (auto it = spec.meta.find(kScaleDownWindowKey); it != spec.meta.end()) {
      if (Status s = ApplyScaledObjectOption(it->first, it->second, &spec); !s.ok()) return s;
      spec.meta.erase(it);
    }
    specs.push_back(std::move(spec));
  }
  specs.insert(specs.end(), grid.begin(), grid.end());
  std::vector<std::vector<SeedFigures>> figures;
  if (Status s = SimulateAll(specs, workloads, o.cluster, o.jobs, log, &figures); !s.ok()) return s;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i < candidates.size()) {
      TunePoint t = Aggregate(CandidateName(candidates[i]), figures[i]);
      t.meta = candidates[i];
      t.distance = SweptDistance(candidates[i], default_meta);
      r.warmpool.push_back(std::move(t));
    } else {
      r.keda.push_back(Aggregate(specs[i].name, figures[i]));
    }
  }
  const std::string default_name = CandidateName(default_meta);
  for (const auto& t : r.warmpool) {
    if (t.name == default_name) r.default_point = t;
  }
  const std::vector<TunePoint> steady = WithinChurnBound(r.warmpool);
  r.front = ParetoFront(steady);
  r.slo_given = o.slo_p95 >= 0;
  r.slo_p95 = r.slo_given ? o.slo_p95 : r.default_point.p95;
  if (const TunePoint* best = CheapestAtSlo(steady, r.slo_p95)) {
    // A change from the default must pay more than the seeds' noise.
    const bool default_as_good = r.default_point.killed == 0 && r.default_point.p95 <= r.slo_p95 &&
                                 GpuHoursRatio(r.default_point, *best) <= 1 + kMinSaving;
    r.recommended = default_as_good ? r.default_point : *best;
    r.slo_met = true;
  } else if (!r.front.empty()) {
    r.recommended = *std::min_element(r.front.begin(), r.front.end(),
                                      [](const TunePoint& a, const TunePoint& b) {
                                        return std::tie(a.p95, a.gpu_h) < std::tie(b.p95, b.gpu_h);
                                      });
  } else {
    return Status::InvalidArgument("every warmpool candidate kills or requeues tasks on " +
                                   r.workload + ": see docs/sim.md, the worker grace");
  }
  if (const TunePoint* k = CheapestNoSlowerThan(r.keda, r.recommended)) {
    r.keda_best = *k;
    r.keda_found = true;
    r.cost_at_equal_slo = GpuHoursRatio(r.recommended, r.keda_best);
  }
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace warmpool::sim
