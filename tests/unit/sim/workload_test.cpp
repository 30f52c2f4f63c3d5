#include "sim/workload.h"

#include <limits>

#include <catch2/catch.hpp>

namespace warmpool::sim {
namespace {

TEST_CASE("Workload CSV: header, optional eta and queue, sorted by arrival", "[sim][workload]") {
  Workload w;
  REQUIRE(ParseWorkloadCsv("arrival_s,duration_s,eta_s,queue\n"
                           "10,2.5,,gpu\n"
                           "# comment\n"
                           "5,1,100,cpu\n",
                           "t", &w)
              .ok());
  REQUIRE(w.tasks.size() == 2);
  CHECK(w.tasks[0].arrival_s == 5);
  CHECK(w.tasks[0].eta_s == 100);
  CHECK(w.tasks[0].queue == "cpu");
  CHECK(w.tasks[1].eta_s < 0);
  CHECK(w.horizon_s == 100 + 3 + 7200);  // last runnable + longest (rounded up) + 2 h

  Workload minimal;
  REQUIRE(ParseWorkloadCsv("arrival_s,duration_s\n0,1\n", "m", &minimal).ok());
  CHECK(minimal.tasks.size() == 1);

  Workload named;
  REQUIRE(ParseWorkloadCsv("arrival_s,duration_s,queue,task\n0,1,gpu,app.resize\n2,3,gpu,\n", "n",
                           &named)
              .ok());
  REQUIRE(named.tasks.size() == 2);
  CHECK(named.tasks[0].task == "app.resize");
  CHECK(named.tasks[1].task.empty());
  Workload again;  // the task column is written where a task is named, and read back
  REQUIRE(ParseWorkloadCsv(FormatWorkloadCsv(named), "n", &again).ok());
  CHECK(again.tasks[0].task == "app.resize");
  CHECK(FormatWorkloadCsv(minimal).find("task") == std::string::npos);
  Workload misplaced;
  CHECK_FALSE(ParseWorkloadCsv("arrival_s,duration_s,task,queue\n0,1,a,b\n", "x", &misplaced).ok());
}

TEST_CASE("Workload CSV errors name the line and field", "[sim][workload]") {
  const char* bad[] = {
      "",
      "when,how_long\n1,1\n",
      "arrival_s,duration_s,colour\n1,1,red\n",
      "arrival_s,duration_s\n1\n",
      "arrival_s,duration_s\n-1,1\n",
      "arrival_s,duration_s\n1,0\n",
      "arrival_s,duration_s,eta_s\n1,1,soon\n",
      // Past a year: the simulator would step through every second of it.
      "arrival_s,duration_s\n9e15,1\n",
      "arrival_s,duration_s\n1,1e12\n",
      "arrival_s,duration_s,eta_s\n1,1,1e300\n",
      "arrival_s,duration_s,eta_s\n1,1,-1e300\n",
  };
  for (const char* text : bad) {
    DYNAMIC_SECTION(text) {
      Workload w;
      Status s = ParseWorkloadCsv(text, "bad.csv", &w);
      CHECK(s.code() == Status::Code::kInvalidArgument);
      CHECK_THAT(s.message(), Catch::Contains("bad.csv"));
    }
  }
}

TEST_CASE("A workload past a year is refused, whatever made it", "[sim][workload]") {
  Workload w;
  w.name = "imported";
  w.tasks.push_back(Task{0, 10, -1, "gpu", ""});
  w.tasks.push_back(Task{5, 10, -1, "gpu", ""});
  CHECK(CheckWorkloadLimits(w).ok());
  w.tasks[1].duration_s = kMaxWorkloadSeconds;
  CHECK(CheckWorkloadLimits(w).ok());
  for (double bad : {kMaxWorkloadSeconds + 1, 1e300, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    DYNAMIC_SECTION(bad) {
      Workload d = w;
      d.tasks[1].duration_s = bad;
      Status s = CheckWorkloadLimits(d);
      CHECK(s.code() == Status::Code::kInvalidArgument);
      CHECK_THAT(s.message(), Catch::Contains("imported task 1"));
      Workload a = w;
      a.tasks[1].arrival_s = bad;
      CHECK_FALSE(CheckWorkloadLimits(a).ok());
      Workload e = w;
      e.tasks[1].eta_s = bad;
      CHECK_FALSE(CheckWorkloadLimits(e).ok());
    }
  }
  w.tasks[0].eta_s = -1e300;  // negative is "no eta", but must still fit whole seconds
  CHECK_FALSE(CheckWorkloadLimits(w).ok());
  w.tasks[0].eta_s = -1;
  w.tasks[0].arrival_s = -1;
  CHECK_FALSE(CheckWorkloadLimits(w).ok());
}

TEST_CASE("CSV round-trips a generated workload", "[sim][workload]") {
  Workload w;
  REQUIRE(GenerateWorkload("W4", 3, &w));
  Workload back;
  REQUIRE(ParseWorkloadCsv(FormatWorkloadCsv(w), "W4", &back).ok());
  REQUIRE(back.tasks.size() == w.tasks.size());
  for (size_t i = 0; i < w.tasks.size(); i += 97) {
    CHECK(back.tasks[i].arrival_s == Approx(w.tasks[i].arrival_s).margin(0.001));
    CHECK(back.tasks[i].duration_s == Approx(w.tasks[i].duration_s).margin(0.001));
  }
}

TEST_CASE("Generators are seeded and have the documented shapes", "[sim][workload]") {
  Workload a, b, c;
  REQUIRE(GenerateWorkload("W1", 1, &a));
  REQUIRE(GenerateWorkload("W1", 1, &b));
  REQUIRE(GenerateWorkload("W1", 2, &c));
  CHECK(a.tasks.size() == 5000);
  CHECK(a.tasks.front().arrival_s >= 600);
  CHECK(a.tasks.back().arrival_s < 720);
  CHECK(a.tasks[17].duration_s == b.tasks[17].duration_s);
  CHECK(a.tasks[17].duration_s != c.tasks[17].duration_s);

  Workload w4;
  REQUIRE(GenerateWorkload("W4", 1, &w4));
  // One batch of 20..50 per hour.
  int batches = 0;
  for (size_t i = 0; i < w4.tasks.size(); ++i) {
    if (i == 0 || w4.tasks[i].arrival_s - w4.tasks[i - 1].arrival_s > 1800) ++batches;
  }
  CHECK(batches >= 68);
  CHECK(w4.tasks.size() >= 20u * batches);
  CHECK(w4.tasks.size() <= 50u * batches);

  Workload w5;
  REQUIRE(GenerateWorkload("W5", 1, &w5));
  size_t long_tasks = 0;
  for (const auto& t : w5.tasks) long_tasks += t.duration_s > 300;
  CHECK(long_tasks >= w5.tasks.size() / 20);  // >= 5 % longer than a 300 s cooldown

  Workload none;
  CHECK_FALSE(GenerateWorkload("W9", 1, &none));
}

}  // namespace
}  // namespace warmpool::sim
