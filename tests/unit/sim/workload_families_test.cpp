#include "sim/workload_families.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <catch2/catch.hpp>

#include "sim/triggers.h"

namespace warmpool::sim {
namespace {

constexpr double kHour = 3600;
constexpr double kDay = 86400;

int DayOfWeek(double t) { return static_cast<int>(std::floor(t / kDay)) % 7; }  // 0 = Monday
double HourOfDay(double t) { return std::fmod(t, kDay) / kHour; }

TEST_CASE("Simulated day 0 is a Monday", "[sim][families]") {
  using namespace std::chrono;
  const auto day = floor<days>(kSimEpoch);
  CHECK(kSimEpoch == time_point<system_clock>(day));
  CHECK(weekday(day) == Monday);
}

TEST_CASE("Workload families are seeded and reachable by name", "[sim][families]") {
  for (const char* name : {"office", "weekly", "drift"}) {
    DYNAMIC_SECTION(name) {
      Workload a, b, c;
      REQUIRE(GenerateWorkload(name, 1, &a));  // through the W1..W5 entry point
      REQUIRE(GenerateWorkloadFamily(name, 1, &b));
      REQUIRE(GenerateWorkloadFamily(name, 2, &c));
      CHECK(a.name == name);
      REQUIRE(a.tasks.size() == b.tasks.size());
      for (size_t i = 0; i < a.tasks.size(); i += 101) {
        CHECK(a.tasks[i].arrival_s == b.tasks[i].arrival_s);
        CHECK(a.tasks[i].duration_s == b.tasks[i].duration_s);
      }
      CHECK(c.tasks.size() != a.tasks.size());
      CHECK(std::is_sorted(a.tasks.begin(), a.tasks.end(),
                           [](const Task& x, const Task& y) { return x.arrival_s < y.arrival_s; }));
      for (const Task& t : a.tasks) {
        REQUIRE(t.arrival_s >= 0);
        REQUIRE(t.arrival_s < static_cast<double>(a.horizon_s));
        REQUIRE(t.duration_s > 0);
      }
    }
  }
  Workload w;
  CHECK_FALSE(GenerateWorkloadFamily("W1", 1, &w));
  CHECK_FALSE(GenerateWorkloadFamily("offices", 1, &w));
}

TEST_CASE("office: weekday bursts in office hours, short night jobs", "[sim][families]") {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Workload w;
    REQUIRE(GenerateWorkloadFamily("office", seed, &w));
    CHECK(w.horizon_s == 14 * 86400);
    int day_tasks = 0, night = 0;
    std::map<int, int> per_weekday_day;  // day index -> office-hours tasks
    for (const Task& t : w.tasks) {
      const double h = HourOfDay(t.arrival_s);
      if (h < 6) {  // night job: ~5 minutes
        ++night;
        CHECK(t.task == "office.night_job");  // a task of its own name, as on a real queue
        CHECK(t.duration_s >= 270);
        CHECK(t.duration_s <= 330);
        continue;
      }
      ++day_tasks;
      CHECK(t.task == "office.burst_task");
      CHECK(DayOfWeek(t.arrival_s) < 5);  // never at weekends
      CHECK(h >= 9);                      // from 09:00
      CHECK(h < 17 + 2.0 / 60);           // last burst starts before 17:00
      ++per_weekday_day[static_cast<int>(t.arrival_s / kDay)];
    }
    CHECK(night >= 14 * 2);
    CHECK(night <= 14 * 4);
    CHECK(per_weekday_day.size() == 10);
    for (const auto& [day, n] : per_weekday_day) {
      CHECK(n >= 4 * 20);   // >= 4 bursts of >= 20 in 8 h at most 120 min apart
      CHECK(n <= 13 * 80);  // <= 13 bursts at least 40 min apart
    }
    CHECK(day_tasks >= 2000);
    CHECK(day_tasks <= 5000);
  }
}

TEST_CASE("weekly: a big Sunday batch and a small daily one", "[sim][families]") {
  Workload w;
  REQUIRE(GenerateWorkloadFamily("weekly", 4, &w));
  CHECK(w.horizon_s == 28 * 86400);
  std::map<int, int> big, small;  // day -> tasks of that batch
  for (const Task& t : w.tasks) {
    const double h = HourOfDay(t.arrival_s);
    const int day = static_cast<int>(t.arrival_s / kDay);
    if (h >= 1.5 && h < 2.75) {
      ++big[day];
      CHECK(t.task == "weekly.sunday");
      CHECK(DayOfWeek(t.arrival_s) == 6);
    } else {
      CHECK(h >= 6 - 10.0 / 60);
      CHECK(h < 6 + 11.0 / 60);
      CHECK(t.task == "weekly.daily");
      ++small[day];
    }
  }
  CHECK(big.size() == 4);
  for (const auto& [day, n] : big) CHECK((n >= 2000 && n <= 4000));
  CHECK(small.size() == 28);
  for (const auto& [day, n] : small) CHECK((n >= 50 && n <= 150));
}

TEST_CASE("drift: Poisson whose rate wanders within its bounds over days", "[sim][families]") {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Workload w;
    REQUIRE(GenerateWorkloadFamily("drift", seed, &w));
    const double mean_rate = 10.0 / 37.5;
    std::map<int, int> per_6h;
    for (const Task& t : w.tasks) ++per_6h[static_cast<int>(t.arrival_s / (6 * kHour))];
    int lo = 1 << 30, hi = 0;
    for (int b = 0; b < 14 * 4 - 1; ++b) {  // the last block is cut short (2 h tail)
      const int n = per_6h[b];
      lo = std::min(lo, n);
      hi = std::max(hi, n);
      CHECK(n >= 0.5 * mean_rate * std::exp(-2.0) * 6 * kHour);  // rate clamped to e^-2..e^1
      CHECK(n <= 1.1 * mean_rate * std::exp(1.0) * 6 * kHour);
    }
    CHECK(hi > 2 * lo);  // it drifts
  }
}

}  // namespace
}  // namespace warmpool::sim
