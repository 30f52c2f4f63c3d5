// warmpool-sim tune's report (sim/tune.h): a table for people, JSON for scripts.
#include <algorithm>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/tune.h"

namespace warmpool::sim {
namespace {

std::string Line(const char* fmt, const TunePoint& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, p.gpu_h, p.p95, static_cast<long long>(p.killed), p.reversals,
                p.name.c_str());
  return buf;
}

// One candidate's row of the front: GPU-h, p95, killed, reversals/h, name.
constexpr const char* kFrontRow = "%8.2f %7.0f %7lld %6.2f  %s";

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

nlohmann::json PointJson(const TunePoint& p) {
  nlohmann::json j = {{"name", p.name},
                      {"gpuHours", p.gpu_h},
                      {"p95WaitSeconds", p.p95},
                      {"killedOrRequeued", p.killed},
                      {"reversalsPerHour", p.reversals}};
  if (!p.meta.empty()) j["metadata"] = p.meta;
  if (p.ties > 0) j["sameFiguresAs"] = p.ties;
  return j;
}

}  // namespace

std::string TuneReportTable(const TuneResult& r, const std::string& patch_path) {
  std::string s = "warmpool-sim tune: " + r.workload + "\n\n";
  s.append(
      "Pareto front of warmpool's candidates (GPU-h vs p95 wait, killing nothing; a shorter\n");
  s.append("HPA window only where it reverses at most " + Number(kMaxReversalsPerHour) +
           " times/h or no more than the shipped one):\n");
  s.append("   GPU-h   p95 s  killed  rev/h  candidate\n");
  for (const auto& p : r.front) {
    std::string l = Line(kFrontRow, p);
    if (p.ties > 0) l.append(" (+" + std::to_string(p.ties) + " with the same figures)");
    if (p.name == r.recommended.name) l.append("   <- recommended");
    if (p.name == r.default_point.name) l.append("   <- default");
    s.append(l).append("\n");
  }
  const bool on_front = std::any_of(r.front.begin(), r.front.end(), [&](const TunePoint& p) {
    return p.name == r.recommended.name;
  });
  if (!on_front) {  // the default, kept: the front saves no more than kMinSaving at its p95
    s.append(Line(kFrontRow, r.recommended));
    s.append("   <- recommended   <- default (the cheapest at its p95 saves at most " +
             Number(kMinSaving * 100) + " %)\n");
  }
  char buf[512];
  s.append("\n");
  s.append(Line("default:      %.2f GPU-h, p95 %.0f s, killed %lld, %.2f reversals/h  (%s)\n",
                r.default_point));
  if (r.slo_given) {
    std::snprintf(buf, sizeof buf, "SLO: p95 wait <= %.0f s (--slo)\n", r.slo_p95);
  } else {
    std::snprintf(buf, sizeof buf,
                  "SLO: p95 wait <= %.0f s (no --slo: the default candidate's p95)\n", r.slo_p95);
  }
  s.append(buf);
  s.append(Line("recommended:  %.2f GPU-h, p95 %.0f s, killed %lld, %.2f reversals/h  (%s)\n",
                r.recommended));
  if (!r.slo_met) s.append("  no candidate meets the SLO: this is the lowest p95 on the front\n");
  if (r.keda_found) {
    s.append(
        Line("KEDA at the same SLO: %.2f GPU-h, p95 %.0f s, killed %lld, %.2f reversals/h  (%s)\n",
             r.keda_best));
    std::snprintf(buf, sizeof buf,
                  "cost at equal SLO: %.2f (warmpool GPU-h / KEDA GPU-h, median over the seeds)\n",
                  r.cost_at_equal_slo);
  } else {
    std::snprintf(buf, sizeof buf,
                  "KEDA at the same SLO: none of %zu grid configurations waits no longer than "
                  "the recommendation (p95 %.0f s) without kills\ncost at equal SLO: n/a (no KEDA "
                  "configuration meets it)\n",
                  r.keda.size(), r.recommended.p95);
  }
  s.append(buf);
  s.append("\nScaledObject patch (kustomize JSON6902");
  s.append(patch_path.empty() ? "" : ", written to " + patch_path);
  s.append("):\n").append(ScaledObjectPatch(r.recommended.meta));
  s.append("\nkustomization.yaml entry:\n");
  s.append(KustomizationEntry(patch_path.empty() ? "tune-patch.yaml" : patch_path));
  return s;
}

std::string TuneReportJson(const TuneResult& r) {
  nlohmann::json j;
  j["workload"] = r.workload;
  j["sloP95Seconds"] = r.slo_p95;
  j["sloGiven"] = r.slo_given;
  j["sloMet"] = r.slo_met;
  j["front"] = nlohmann::json::array();
  for (const auto& p : r.front) j["front"].push_back(PointJson(p));
  j["candidates"] = nlohmann::json::array();
  for (const auto& p : r.warmpool) j["candidates"].push_back(PointJson(p));
  j["keda"] = nlohmann::json::array();
  for (const auto& p : r.keda) j["keda"].push_back(PointJson(p));
  j["default"] = PointJson(r.default_point);
  j["recommended"] = PointJson(r.recommended);
  if (r.keda_found) {
    j["kedaAtSlo"] = PointJson(r.keda_best);
    j["costAtEqualSlo"] = r.cost_at_equal_slo;
  } else {
    j["kedaAtSlo"] = nullptr;
    j["costAtEqualSlo"] = nullptr;
  }
  j["patch"] = ScaledObjectPatch(r.recommended.meta);
  return j.dump(2);
}

}  // namespace warmpool::sim
