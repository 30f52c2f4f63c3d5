#include "sim/workload_families.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace warmpool::sim {
namespace {

constexpr double kMinute = 60;
constexpr double kHour = 3600;
constexpr double kDay = 86400;
constexpr double kZ95 = 1.6448536269514722;

double Uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

int UniformInt(std::mt19937_64& rng, int lo, int hi) {  // inclusive
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// Lognormal with the given median and 95th percentile.
double LogNormal(std::mt19937_64& rng, double median, double p95) {
  std::normal_distribution<double> n(std::log(median), std::log(p95 / median) / kZ95);
  return std::exp(n(rng));
}

// task: the Celery task name, so the policy learns each kind's duration apart as it does on a
// real queue (empty for a family of one kind).
void Add(Workload* w, double arrival, double duration, const char* task = "") {
  Task t;
  t.arrival_s = arrival;
  t.duration_s = std::max(0.1, duration);
  t.queue = "gpu";
  t.task = task;
  w->tasks.push_back(std::move(t));
}

// Office hours, 14 days: on weekdays from 09:00 to 17:00 a burst of 20-80 tasks (within 30-120 s,
// durations median 45 s, p95 120 s) every 40-120 minutes; every night 2-4 jobs of ~5 minutes
// between 00:00 and 06:00.
void Office(std::mt19937_64& rng, Workload* w) {
  const int days = 14;
  for (int d = 0; d < days; ++d) {
    const double day = d * kDay;
    const int nightly = UniformInt(rng, 2, 4);
    for (int j = 0; j < nightly; ++j)
      Add(w, day + Uniform(rng, 0, 6 * kHour), Uniform(rng, 270, 330), "office.night_job");
    if (d % 7 >= 5) continue;  // Saturday, Sunday
    for (double t = day + 9 * kHour + Uniform(rng, 0, 40 * kMinute); t < day + 17 * kHour;
         t += Uniform(rng, 40 * kMinute, 120 * kMinute)) {
      const int n = UniformInt(rng, 20, 80);
      const double spread = Uniform(rng, 30, 120);
      for (int i = 0; i < n; ++i)
        Add(w, t + Uniform(rng, 0, spread), LogNormal(rng, 45, 120), "office.burst_task");
    }
  }
  w->horizon_s = static_cast<int64_t>(days * kDay);
}

// Weekly batches, 28 days: every Sunday at 02:00 (+- 30 min) 2,000-4,000 tasks enqueued over
// 5-15 minutes (median 20 s, p95 60 s); every day at 06:00 (+- 10 min) 50-150 tasks within a
// minute (median 10 s, p95 30 s).
void Weekly(std::mt19937_64& rng, Workload* w) {
  const int days = 28;
  for (int d = 0; d < days; ++d) {
    const double day = d * kDay;
    const double daily = day + 6 * kHour + Uniform(rng, -10 * kMinute, 10 * kMinute);
    const int small = UniformInt(rng, 50, 150);
    for (int i = 0; i < small; ++i)
      Add(w, daily + Uniform(rng, 0, kMinute), LogNormal(rng, 10, 30), "weekly.daily");
    if (d % 7 != 6) continue;
    const double big = day + 2 * kHour + Uniform(rng, -30 * kMinute, 30 * kMinute);
    const double spread = Uniform(rng, 5 * kMinute, 15 * kMinute);
    const int n = UniformInt(rng, 2000, 4000);
    for (int i = 0; i < n; ++i)
      Add(w, big + Uniform(rng, 0, spread), LogNormal(rng, 20, 60), "weekly.sunday");
  }
  w->horizon_s = static_cast<int64_t>(days * kDay);
}

// Drifting Poisson, 14 days: the log of the rate follows a mean-reverting random walk
// (Ornstein-Uhlenbeck, hourly steps, time constant 2 days, stationary sd 0.6, clamped to
// [-2, 1]) around 10 busy workers; rate linear between hourly knots; durations median 30 s,
// p95 90 s (mean ~37.5 s).
void Drift(std::mt19937_64& rng, Workload* w) {
  const int hours = 14 * 24;
  const double mean_rate = 10.0 / 37.5, theta = 1.0 / 48, sd = 0.6;
  const double step_sd = sd * std::sqrt(2 * theta);
  std::normal_distribution<double> noise(0, step_sd);
  std::vector<double> log_rate(hours + 1);
  log_rate[0] = std::clamp(std::normal_distribution<double>(0, sd)(rng), -2.0, 1.0);
  for (int h = 1; h <= hours; ++h) {
    log_rate[h] = std::clamp(log_rate[h - 1] * (1 - theta) + noise(rng), -2.0, 1.0);
  }
  auto rate = [&](double t) {
    const double x = t / kHour;
    const int h = std::min(hours - 1, static_cast<int>(x));
    const double f = x - h;
    return mean_rate * std::exp(log_rate[h] * (1 - f) + log_rate[h + 1] * f);
  };
  const double max_rate = mean_rate * std::exp(1.0);
  std::exponential_distribution<double> gap(max_rate);
  const double end = hours * kHour - 2 * kHour;
  for (double t = gap(rng); t < end; t += gap(rng)) {  // thinning
    if (Uniform(rng, 0, max_rate) < rate(t)) Add(w, t, LogNormal(rng, 30, 90));
  }
  w->horizon_s = static_cast<int64_t>(hours * kHour);
}

}  // namespace

bool GenerateWorkloadFamily(const std::string& name, uint64_t seed, Workload* out) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0xFA31);
  Workload w;
  w.name = name;
  if (name == "office") {
    Office(rng, &w);
  } else if (name == "weekly") {
    Weekly(rng, &w);
  } else if (name == "drift") {
    Drift(rng, &w);
  } else {
    return false;
  }
  std::stable_sort(w.tasks.begin(), w.tasks.end(),
                   [](const Task& a, const Task& b) { return a.arrival_s < b.arrival_s; });
  *out = std::move(w);
  return true;
}

}  // namespace warmpool::sim
