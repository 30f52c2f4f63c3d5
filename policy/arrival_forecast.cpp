#include "policy/arrival_forecast.h"

#include <algorithm>
#include <cmath>

namespace warmpool::policy {
namespace {

constexpr double kDayWeight = 0.3;  // EWMA weight of a new day's count in its bucket
constexpr int64_t kMaxDays = 255;
constexpr int64_t kSecondsPerHour = 3600;

int64_t HourOf(std::chrono::system_clock::time_point t) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  return s >= 0 ? s / kSecondsPerHour : (s - kSecondsPerHour + 1) / kSecondsPerHour;
}

int BucketOfHour(int64_t hour) {
  const int64_t day = hour >= 0 ? hour / 24 : (hour - 23) / 24;
  const auto hour_of_day = static_cast<int>(hour - day * 24);
  // 1970-01-01 was a Thursday: weekday index 0 = Thursday, so 2 and 3 are Saturday and Sunday.
  const auto dow = static_cast<int>(((day % 7) + 7) % 7);
  const bool weekend = dow == 2 || dow == 3;
  return hour_of_day + (weekend ? 24 : 0);
}

}  // namespace

int ArrivalBucket(std::chrono::system_clock::time_point t) { return BucketOfHour(HourOf(t)); }

ArrivalForecast CountArrivals(ArrivalForecast f, std::chrono::system_clock::time_point now,
                              double arrived) {
  const int64_t h = HourOf(now);
  if (f.hour < 0 || h < f.hour) {  // first observation (or a clock that went back): start over
    f.hour = h;
    f.count = arrived;
    f.partial = true;
    return f;
  }
  if (h > f.hour) {
    if (!f.partial) {
      if (f.rate.empty()) {
        f.rate.assign(ArrivalForecast::kBuckets, 0);
        f.days.assign(ArrivalForecast::kBuckets, 0);
      }
      const int b = BucketOfHour(f.hour);
      f.rate[b] = f.days[b] == 0 ? f.count : (1 - kDayWeight) * f.rate[b] + kDayWeight * f.count;
      f.days[b] = std::min(f.days[b] + 1, kMaxDays);
    }
    // The next hour is whole only if it directly follows an observed one (observations come
    // every poll, idle or not); after a gap it started unobserved.
    f.partial = h != f.hour + 1;
    f.hour = h;
    f.count = 0;
  }
  f.count += arrived;
  return f;
}

std::optional<double> ForecastRate(const ArrivalForecast& f,
                                   std::chrono::system_clock::time_point t) {
  if (f.rate.empty()) return std::nullopt;
  const int b = ArrivalBucket(t);
  if (f.days[b] < ArrivalForecast::kMinDays) return std::nullopt;
  return f.rate[b];
}

int64_t ForecastReplicas(const ArrivalForecast& f, std::chrono::system_clock::time_point now,
                         double lead_seconds, double task_seconds, int64_t tasks_per_replica) {
  if (task_seconds <= 0) return -1;
  const auto later = now + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                               std::chrono::duration<double>(std::max(0.0, lead_seconds)));
  const std::optional<double> a = ForecastRate(f, now);
  const std::optional<double> b = ForecastRate(f, later);
  if (!a && !b) return -1;
  const double per_hour = std::max(a.value_or(0), b.value_or(0));
  if (per_hour <= 0) return 0;
  const double slots = per_hour / kSecondsPerHour * task_seconds;
  const auto replicas = static_cast<int64_t>(
      std::ceil(slots / static_cast<double>(std::max<int64_t>(1, tasks_per_replica)) - 1e-9));
  return std::max<int64_t>(1, replicas);
}

}  // namespace warmpool::policy
