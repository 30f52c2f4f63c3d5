#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace warmpool::policy {

// Time-of-day arrival rates learned from the queue itself, as AWS EC2 Auto Scaling's predictive
// scaling forecasts load per hour from its history ("Predictive scaling for Amazon EC2 Auto
// Scaling", AWS docs): 48 hourly buckets, UTC hours 0-23 on weekdays then 0-23 on weekends, each
// an EWMA over the days it was seen of the tasks that arrived in that hour. A forecast only ever
// adds capacity (ForecastReplicas); by default it runs in shadow mode (exported, not acted on).
// Plain data; copyable.
struct ArrivalForecast {
  static constexpr int kBuckets = 48;
  static constexpr int kMinDays = 2;  // days a bucket needs before it forecasts
  std::vector<double> rate;           // tasks per hour per bucket; empty = nothing learned
  std::vector<int64_t> days;          // days folded into each bucket (capped at 255)
  int64_t hour = -1;                  // the hour (since the Unix epoch) being counted; -1 = none
  double count = 0;                   // tasks counted in that hour so far
  bool partial = true;                // that hour was not watched from its start: not folded

  friend bool operator==(const ArrivalForecast&, const ArrivalForecast&) = default;
};

// The bucket of a time: UTC hour of day, +24 on Saturday and Sunday. Pure.
int ArrivalBucket(std::chrono::system_clock::time_point t);

// Counts `arrived` tasks at `now` (observations come in time order). When `now` is in a later hour
// than the one being counted, that hour is folded into its bucket (EWMA weight 0.3 per day, the
// first day taken as is) unless it was partial; hours nobody observed are not folded (the scaler
// was down: nothing is known of them). Pure.
ArrivalForecast CountArrivals(ArrivalForecast f, std::chrono::system_clock::time_point now,
                              double arrived);

// Forecast tasks per hour at t, once its bucket has kMinDays days; nullopt before. Pure.
std::optional<double> ForecastRate(const ArrivalForecast& f,
                                   std::chrono::system_clock::time_point t);

// Replicas the forecast asks to have warm at `now`: by Little's law, the arrival rate expected
// over the next lead seconds (the highest of the buckets of now and now + lead, so capacity
// booted now is ready when the hour's work comes) times the task duration, in slots, rounded up
// (at least 1 when any work is expected); 0 when the forecast knows of no work, -1 when it
// knows nothing yet or the duration is unknown. Pure.
int64_t ForecastReplicas(const ArrivalForecast& f, std::chrono::system_clock::time_point now,
                         double lead_seconds, double task_seconds, int64_t tasks_per_replica);

}  // namespace warmpool::policy
