#include "sim/workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <random>

#include "sim/csv_lines.h"
#include "sim/workload_families.h"

namespace warmpool::sim {
namespace {

constexpr double kHour = 3600;
constexpr char kMaxText[] = "31622400 s (366 days)";
constexpr double kDay = 86400;

// A time of a workload that fits kMaxWorkloadSeconds either way (an eta may be negative: none).
bool WithinSpan(double v) {
  return std::isfinite(v) && v >= -kMaxWorkloadSeconds && v <= kMaxWorkloadSeconds;
}
constexpr double kZ95 = 1.6448536269514722;

// Lognormal with the given median and 95th percentile.
double LogNormal(std::mt19937_64& rng, double median, double p95) {
  const double sigma = std::log(p95 / median) / kZ95;
  std::normal_distribution<double> n(std::log(median), sigma);
  return std::exp(n(rng));
}

double Uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

void Finish(Workload* w) {
  std::stable_sort(w->tasks.begin(), w->tasks.end(),
                   [](const Task& a, const Task& b) { return a.arrival_s < b.arrival_s; });
}

// Non-homogeneous Poisson arrivals by thinning; rate(t) in tasks/s, bounded by max_rate.
template <typename RateFn>
std::vector<double> Poisson(std::mt19937_64& rng, double horizon, double max_rate, RateFn rate) {
  std::vector<double> out;
  std::exponential_distribution<double> gap(max_rate);
  for (double t = gap(rng); t < horizon; t += gap(rng)) {
    if (Uniform(rng, 0, 1) * max_rate < rate(t)) out.push_back(t);
  }
  return out;
}

// Diurnal rate: peak:trough 2:1 (peak at 14:00), weekend days (5, 6) at 60 %.
double Diurnal(double t, double peak_rate) {
  const double day = std::floor(t / kDay);
  const double hour = std::fmod(t, kDay) / kHour;
  const double shape = 1 + std::sin(2 * std::numbers::pi * (hour - 8) / 24) / 3;  // 2/3 .. 4/3
  const double weekend = static_cast<int64_t>(day) % 7 >= 5 ? 0.6 : 1.0;
  return peak_rate * shape * 0.75 * weekend;
}

}  // namespace

Status CheckWorkloadLimits(const Workload& w) {
  if (w.tasks.size() > static_cast<size_t>(kMaxWorkloadTasks)) {
    return Status::InvalidArgument("workload " + w.name + ": " + std::to_string(w.tasks.size()) +
                                   " tasks, more than " + std::to_string(kMaxWorkloadTasks));
  }
  for (size_t i = 0; i < w.tasks.size(); ++i) {
    const Task& t = w.tasks[i];
    if (!WithinSpan(t.arrival_s) || t.arrival_s < 0 || !WithinSpan(t.duration_s) ||
        !WithinSpan(t.eta_s)) {
      return Status::InvalidArgument(
          "workload " + w.name + " task " + std::to_string(i) +
          ": arrival (>= 0), eta and duration must be finite and at most " + kMaxText +
          " either way");
    }
  }
  return Status::Ok();
}

Status ParseWorkloadCsv(std::string_view text, const std::string& name, Workload* out) {
  Workload w;
  w.name = name;
  CsvLines lines(text, CsvLines::Comments::kSkip);
  std::string_view line;
  int eta_col = -1, queue_col = -1, task_col = -1;
  bool header = true;
  double last_runnable = 0, longest = 0;
  while (lines.Next(&line)) {
    auto fields = SplitCsvFields(line, CsvTrim::kSpaces);
    const std::string where =
        "workload " + name + " line " + std::to_string(lines.line_no()) + ": ";
    if (header) {
      header = false;
      if (fields.size() < 2 || fields[0] != "arrival_s" || fields[1] != "duration_s") {
        return Status::InvalidArgument(where + "header must start with arrival_s,duration_s");
      }
      for (size_t i = 2; i < fields.size(); ++i) {
        if (fields[i] == "eta_s" && eta_col < 0 && queue_col < 0 && task_col < 0) {
          eta_col = static_cast<int>(i);
        } else if (fields[i] == "queue" && queue_col < 0 && task_col < 0) {
          queue_col = static_cast<int>(i);
        } else if (fields[i] == "task" && task_col < 0) {
          task_col = static_cast<int>(i);
        } else {
          return Status::InvalidArgument(
              where + "unknown or misplaced column \"" + std::string(fields[i]) +
              "\" (allowed: arrival_s,duration_s[,eta_s][,queue][,task])");
        }
      }
      continue;
    }
    const size_t want = 2 + (eta_col >= 0) + (queue_col >= 0) + (task_col >= 0);
    if (fields.size() != want) {
      return Status::InvalidArgument(where + "expected " + std::to_string(want) + " fields, got " +
                                     std::to_string(fields.size()));
    }
    if (w.tasks.size() == static_cast<size_t>(kMaxWorkloadTasks)) {
      return Status::InvalidArgument(where + "more than " + std::to_string(kMaxWorkloadTasks) +
                                     " tasks");
    }
    Task t;
    if (!ParseFiniteDouble(fields[0], &t.arrival_s) || t.arrival_s < 0 ||
        t.arrival_s > kMaxWorkloadSeconds) {
      return Status::InvalidArgument(where + "arrival_s=\"" + std::string(fields[0]) +
                                     "\": must be a number >= 0 and at most " + kMaxText);
    }
    if (!ParseFiniteDouble(fields[1], &t.duration_s) || t.duration_s <= 0 ||
        t.duration_s > kMaxWorkloadSeconds) {
      return Status::InvalidArgument(where + "duration_s=\"" + std::string(fields[1]) +
                                     "\": must be a number > 0 and at most " + kMaxText);
    }
    if (eta_col >= 0 && !fields[eta_col].empty() &&
        (!ParseFiniteDouble(fields[eta_col], &t.eta_s) || !WithinSpan(t.eta_s))) {
      return Status::InvalidArgument(where + "eta_s=\"" + std::string(fields[eta_col]) +
                                     "\": must be empty or a number at most " + kMaxText +
                                     " either way");
    }
    if (queue_col >= 0) t.queue = std::string(fields[queue_col]);
    if (task_col >= 0) t.task = std::string(fields[task_col]);
    last_runnable = std::max(last_runnable, std::max(t.arrival_s, t.eta_s));
    longest = std::max(longest, t.duration_s);
    w.tasks.push_back(std::move(t));
  }
  if (header) return Status::InvalidArgument("workload " + name + ": empty file (no header)");
  Finish(&w);
  w.horizon_s = static_cast<int64_t>(std::ceil(last_runnable + longest + 2 * kHour));
  *out = std::move(w);
  return Status::Ok();
}

std::string FormatWorkloadCsv(const Workload& w) {
  // The task column only where a task is named, so unnamed workloads read as before.
  const bool named =
      std::any_of(w.tasks.begin(), w.tasks.end(), [](const Task& t) { return !t.task.empty(); });
  std::string out =
      named ? "arrival_s,duration_s,eta_s,queue,task\n" : "arrival_s,duration_s,eta_s,queue\n";
  char buf[128];
  for (const auto& t : w.tasks) {
    if (t.eta_s >= 0) {
      std::snprintf(buf, sizeof buf, "%.3f,%.3f,%.3f,", t.arrival_s, t.duration_s, t.eta_s);
    } else {
      std::snprintf(buf, sizeof buf, "%.3f,%.3f,,", t.arrival_s, t.duration_s);
    }
    out += buf;
    out += t.queue;
    if (named) out.append(",").append(t.task);
    out += '\n';
  }
  return out;
}

bool GenerateWorkload(const std::string& name, uint64_t seed, Workload* out) {
  if (GenerateWorkloadFamily(name, seed, out)) return true;  // office, weekly, drift
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0x5157);
  Workload w;
  w.name = name;
  auto add = [&](double arrival, double duration) {
    w.tasks.push_back(Task{arrival, std::max(0.1, duration), -1, "gpu", ""});
  };
  if (name == "W1") {
    // Monthly batch: 5,000 images enqueued over 2 min, then idle. S ~ lognormal(1 s, p95 3 s).
    for (int i = 0; i < 5000; ++i) add(600 + Uniform(rng, 0, 120), LogNormal(rng, 1, 3));
    w.horizon_s = static_cast<int64_t>(4 * kHour);
  } else if (name == "W2") {
    // Sporadic inference spikes: clusters of 10-200 requests over 1-5 min after heavy-tailed idle
    // gaps (lognormal, median 2 h, ~2 % over 24 h). S ~ lognormal(5 s, p95 20 s).
    const double horizon = 7 * kDay;
    for (double t = 1800; t < horizon - 6 * kHour;) {
      const int n = static_cast<int>(Uniform(rng, 10, 201));
      const double spread = Uniform(rng, 60, 300);
      for (int i = 0; i < n; ++i) add(t + Uniform(rng, 0, spread), LogNormal(rng, 5, 20));
      t += spread + LogNormal(rng, 2 * kHour, 2 * kHour * std::exp(1.2 * kZ95));
    }
    w.horizon_s = static_cast<int64_t>(horizon);
  } else if (name == "W3") {
    // Diurnal Poisson (peak:trough 2:1, weekend dip), peak ~60 busy workers of 100.
    // S ~ lognormal(20 s, p95 60 s), mean ~25 s.
    const double horizon = 7 * kDay;
    const double peak = 60.0 / 25.0;
    for (double t :
         Poisson(rng, horizon - 2 * kHour, peak, [&](double x) { return Diurnal(x, peak); })) {
      add(t, LogNormal(rng, 20, 60));
    }
    w.horizon_s = static_cast<int64_t>(horizon);
  } else if (name == "W4") {
    // Hourly timer: every 60 min +- 3 min a batch of 20-50 tasks within 10 s.
    // S ~ lognormal(30 s, p95 90 s).
    const double horizon = 3 * kDay;
    for (double hour = 1; hour * kHour < horizon - 2 * kHour; hour += 1) {
      const double start = hour * kHour + Uniform(rng, -180, 180);
      const int n = static_cast<int>(Uniform(rng, 20, 51));
      for (int i = 0; i < n; ++i) add(start + Uniform(rng, 0, 10), LogNormal(rng, 30, 90));
    }
    w.horizon_s = static_cast<int64_t>(horizon);
  } else if (name == "W5") {
    // Heavy-tailed durations: W3-shaped arrivals, S ~ lognormal(median 60 s, sigma 1.5) capped at
    // 2 h (mean ~170 s; ~14 % of tasks longer than a 300 s cooldown), peak ~60 busy workers.
    const double horizon = 3 * kDay;
    const double peak = 60.0 / 170.0;
    for (double t :
         Poisson(rng, horizon - 3 * kHour, peak, [&](double x) { return Diurnal(x, peak); })) {
      add(t, std::min(7200.0, LogNormal(rng, 60, 60 * std::exp(1.5 * kZ95))));
    }
    w.horizon_s = static_cast<int64_t>(horizon);
  } else {
    return false;
  }
  Finish(&w);
  *out = std::move(w);
  return true;
}

bool ParseFiniteDouble(std::string_view s, double* out) {
  std::string t(s);
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

}  // namespace warmpool::sim
