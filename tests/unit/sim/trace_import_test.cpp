#include "sim/trace_import.h"

#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

namespace warmpool::sim {
namespace {

// Azure Functions 2019 layout (the sampled 400-function files: minute_K columns, no Trigger).
const char* kInvocations =
    "HashFunction,HashOwner,HashApp,minute_1,minute_2,minute_3,minute_4\n"
    "aaaaaaaa1111,o1,a1,3,0,5,1\n"
    "bbbbbbbb2222,o2,a2,0,20,0,0\n"
    "aaaaaaaa3333,o3,a3,1,1,1,1\n";
const char* kDurations =
    "HashOwner,HashApp,HashFunction,Average,Count,Minimum,Maximum,percentile_Average_0,"
    "percentile_Average_1,percentile_Average_25,percentile_Average_50,percentile_Average_75,"
    "percentile_Average_99,percentile_Average_100\n"
    "o1,a1,aaaaaaaa1111,500,9,90.0,5000.0,100,120,300,400,600,1800,2000\n"
    "o2,a2,bbbbbbbb2222,50,20,10.0,90.0,20,20,30,40,50,70,80\n"
    "o3,a3,aaaaaaaa3333,50,4,0,0,1000,1000,1000,1000,1000,1000,1000\n";

int CountIn(const Workload& w, double lo, double hi) {
  return static_cast<int>(std::count_if(w.tasks.begin(), w.tasks.end(), [&](const Task& t) {
    return t.arrival_s >= lo && t.arrival_s < hi;
  }));
}

TEST_CASE("Trace format names", "[sim][trace]") {
  TraceFormat f{};
  CHECK(ParseTraceFormat("alibaba-gpu-2023", &f));
  CHECK(f == TraceFormat::kAlibabaGpu2023);
  CHECK(ParseTraceFormat("azure-functions-2019", &f));
  CHECK(f == TraceFormat::kAzureFunctions2019);
  CHECK(ParseTraceFormat("azure-llm-2023", &f));
  CHECK(f == TraceFormat::kAzureLlm2023);
  CHECK_FALSE(ParseTraceFormat("azure", &f));
}

TEST_CASE("Piecewise-linear quantile interpolates between percentile knots", "[sim][trace]") {
  const std::vector<std::pair<double, double>> k = {{0, 100}, {0.5, 200}, {0.99, 1000}, {1, 2000}};
  CHECK(PiecewiseLinearQuantile(k, 0) == 100);
  CHECK(PiecewiseLinearQuantile(k, 0.25) == Approx(150));
  CHECK(PiecewiseLinearQuantile(k, 0.5) == Approx(200));
  CHECK(PiecewiseLinearQuantile(k, 0.995) == Approx(1500));
  CHECK(PiecewiseLinearQuantile(k, 1) == 2000);
}

TEST_CASE("Azure Functions: per-minute counts are kept and durations stay in the percentiles",
          "[sim][trace]") {
  ImportOptions opt;
  opt.functions = {"aaaaaaaa1111", "bbbbbbbb"};  // a full hash and a unique prefix
  Workload w;
  std::string summary;
  REQUIRE(ImportAzureFunctions2019(kInvocations, kDurations, "azf", opt, &w, &summary).ok());
  CHECK_THAT(summary, Catch::Contains("29 tasks"));
  REQUIRE(w.tasks.size() == 3 + 0 + 5 + 1 + 20);
  CHECK(std::is_sorted(w.tasks.begin(), w.tasks.end(),
                       [](const Task& a, const Task& b) { return a.arrival_s < b.arrival_s; }));
  const int per_minute[] = {3, 20, 5, 1};
  for (int m = 0; m < 4; ++m) CHECK(CountIn(w, m * 60.0, (m + 1) * 60.0) == per_minute[m]);
  for (const Task& t : w.tasks) {
    CHECK(t.task == t.queue);         // a function is one task name
    if (t.queue == "aaaaaaaa1111") {  // percentiles 100..2000 ms, Minimum 90, Maximum 5000
      CHECK(t.duration_s >= 0.1);
      CHECK(t.duration_s <= 2.0);
    } else {
      CHECK(t.queue == "bbbbbbbb2222");
      CHECK(t.duration_s >= 0.02);
      CHECK(t.duration_s <= 0.08);
    }
  }
  CHECK(w.horizon_s >= 180 + 7200);

  Workload again, other;
  REQUIRE(ImportAzureFunctions2019(kInvocations, kDurations, "azf", opt, &again, nullptr).ok());
  CHECK(again.tasks[7].arrival_s == w.tasks[7].arrival_s);
  CHECK(again.tasks[7].duration_s == w.tasks[7].duration_s);
  opt.seed = 2;
  REQUIRE(ImportAzureFunctions2019(kInvocations, kDurations, "azf", opt, &other, nullptr).ok());
  CHECK(other.tasks.size() == w.tasks.size());
  CHECK(other.tasks[7].arrival_s != w.tasks[7].arrival_s);
}

TEST_CASE("Azure Functions: top N, window, even spread, trigger", "[sim][trace]") {
  ImportOptions opt;
  opt.top = 1;
  Workload w;
  REQUIRE(ImportAzureFunctions2019(kInvocations, kDurations, "azf", opt, &w, nullptr).ok());
  CHECK(w.tasks.size() == 20);  // bbbbbbbb2222 is the busiest
  CHECK(w.tasks[0].queue == "bbbbbbbb2222");

  opt.top = 3;
  opt.start_hour = 2.0 / 60;  // minutes 3 and 4 only, arrivals from the window's start
  opt.hours = 2.0 / 60;
  opt.even_spread = true;
  REQUIRE(ImportAzureFunctions2019(kInvocations, kDurations, "azf", opt, &w, nullptr).ok());
  REQUIRE(w.tasks.size() == 5 + 1 + 1 + 1);
  CHECK(CountIn(w, 0, 60) == 6);
  CHECK(w.tasks[0].arrival_s == Approx(6.0));  // 5 calls in a minute: 6, 18, 30, ... s
  for (const Task& t : w.tasks) {
    if (t.queue == "aaaaaaaa3333") CHECK(t.duration_s == Approx(1.0));  // all percentiles 1 s
  }

  const char* with_trigger =
      "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
      "o1,a1,aaaaaaaa1111,http,9,9\n"
      "o2,a2,bbbbbbbb2222,queue,1,0\n";
  ImportOptions q;
  q.top = 5;
  q.trigger = "queue";
  REQUIRE(ImportAzureFunctions2019(with_trigger, kDurations, "azf", q, &w, nullptr).ok());
  CHECK(w.tasks.size() == 1);
  q.top = 5;
  Status s = ImportAzureFunctions2019(kInvocations, kDurations, "azf", q, &w, nullptr);
  CHECK_THAT(s.message(), Catch::Contains("Trigger column"));
}

TEST_CASE("An import window or run time past a year is refused", "[sim][trace]") {
  Workload w;
  ImportOptions opt;
  opt.top = 1;
  for (double hours : {1e9, 8784.5}) {
    opt.hours = hours;
    Status s = ImportAzureFunctions2019(kInvocations, kDurations, "azf.csv", opt, &w, nullptr);
    CHECK_THAT(s.message(), Catch::Contains("hours <= 8784"));
  }
  opt.hours = 1;
  opt.start_hour = 1e300;
  CHECK_FALSE(ImportAzureFunctions2019(kInvocations, kDurations, "azf.csv", opt, &w, nullptr).ok());
  opt.start_hour = 0;
  // Counts that would make more tasks than a workload may hold are refused before any is made.
  const char* huge_cell = "HashFunction,1,2\naaaaaaaa1111,99999999999,1\n";
  Status s0 = ImportAzureFunctions2019(huge_cell, kDurations, "azf.csv", opt, &w, nullptr);
  CHECK_THAT(s0.message(), Catch::Contains("line 2: 1=\"99999999999\""));
  const char* huge_total = "HashFunction,1,2\naaaaaaaa1111,9000000,9000000\n";
  s0 = ImportAzureFunctions2019(huge_total, kDurations, "azf.csv", opt, &w, nullptr);
  CHECK_THAT(s0.message(), Catch::Contains("18000000 tasks, more than 10000000"));
  opt.duration_scale = 1e300;  // every run time past a year
  Status s = ImportAzureFunctions2019(kInvocations, kDurations, "azf.csv", opt, &w, nullptr);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("366 days"));
}

TEST_CASE("Azure Functions: bad input names the file, line and field", "[sim][trace]") {
  struct Case {
    const char* inv;
    const char* dur;
    std::vector<std::string> functions;
    const char* want;
  };
  const std::string bad_count = std::string(kInvocations) + "cccccccc4444,o,a,1,x,0,0\n";
  const std::string short_row = std::string(kInvocations) + "cccccccc4444,o,a,1\n";
  const std::string bad_pct = std::string(kDurations) + "o,a,cccc,1,1,1,1,5,4,4,4,4,4,4\n";
  const Case cases[] = {
      {bad_count.c_str(), kDurations, {"aaaaaaaa1111"}, "invocations line 5: minute_2=\"x\""},
      {short_row.c_str(), kDurations, {"aaaaaaaa1111"}, "line 5: expected 7 fields"},
      {"HashFunction,a,b\nx,1,2\n", kDurations, {"x"}, "no minute columns"},
      {"Hash,minute_1\nx,1\n", kDurations, {"x"}, "lacks column HashFunction"},
      {kInvocations, bad_pct.c_str(), {"aaaaaaaa1111"}, "durations line 5: percentile_Average_1"},
      {kInvocations,
       "HashFunction,percentile_Average_0\n",
       {"aaaaaaaa1111"},
       "lacks column percentile_Average_1"},
      {kInvocations, kDurations, {"aaaaaaaa"}, "ambiguous"},
      {kInvocations, kDurations, {"dddddddd"}, "no function \"dddddddd\""},
      {kInvocations, kDurations, {}, "--top N"},
      {"HashFunction,minute_1\neeeeeeee5555,3\n",
       kDurations,
       {"eeeeeeee5555"},
       "no row in the durations file"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.want) {
      ImportOptions opt;
      opt.functions = c.functions;
      Workload w;
      Status s = ImportAzureFunctions2019(c.inv, c.dur, "azf.csv", opt, &w, nullptr);
      CHECK(s.code() == Status::Code::kInvalidArgument);
      CHECK_THAT(s.message(), Catch::Contains(c.want) && Catch::Contains("azf.csv"));
    }
  }
}

const char* kPods =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "p0,1000,100,1,1000,,LS,Running,100,1100,150\n"            // 1 GPU, runs 950 s
    "p1,1000,100,0,0,,BE,Succeeded,200,300,200\n"              // CPU only: dropped
    "p2,1000,100,2,1000,,BE,Failed,300,400,310\n"              // 2 GPUs -> 2 tasks of 90 s
    "p3,1000,100,1,500,,BE,Pending,400,450,\n"                 // never scheduled: dropped
    "p4,1000,100,8,1000,,LS,Running,500,900000,500\n"          // clipped to 24 h
    "p5,1000,100,1,1000,,LS,Running,999999,1000999,999999\n";  // outside the window

TEST_CASE("Alibaba GPU: a pod asking more GPUs than a workload may hold is refused",
          "[sim][trace]") {
  const std::string pods = std::string(
                               "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                               "creation_time,deletion_time,scheduled_time\n") +
                           "p0,1000,100,99999999999,1000,,LS,Running,100,1100,150\n";
  ImportOptions opt;
  Workload w;
  Status s = ImportAlibabaGpu2023(pods, "pods.csv", opt, &w, nullptr);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("99999999999 tasks, more than 10000000"));
  opt.one_task_per_gpu = false;  // one task per pod: fine
  CHECK(ImportAlibabaGpu2023(pods, "pods.csv", opt, &w, nullptr).ok());
  CHECK(w.tasks.size() == 1);
}

TEST_CASE("Alibaba GPU: a task per GPU, submit time, run time from scheduling", "[sim][trace]") {
  ImportOptions opt;
  opt.hours = 1;
  Workload w;
  std::string summary;
  REQUIRE(ImportAlibabaGpu2023(kPods, "ali", opt, &w, &summary).ok());
  REQUIRE(w.tasks.size() == 1 + 2 + 8);
  CHECK(w.tasks[0].arrival_s == 100);
  CHECK(w.tasks[0].duration_s == 950);
  CHECK(w.tasks[1].arrival_s == 300);
  CHECK(w.tasks[2].duration_s == 90);
  CHECK(w.tasks[3].duration_s == 24 * 3600);
  CHECK_THAT(summary, Catch::Contains("1 CPU-only") && Catch::Contains("1 never-run") &&
                          Catch::Contains("clipped 1"));

  opt.one_task_per_gpu = false;
  opt.start_hour = 250.0 / 3600;
  REQUIRE(ImportAlibabaGpu2023(kPods, "ali", opt, &w, nullptr).ok());
  REQUIRE(w.tasks.size() == 2);
  CHECK(w.tasks[0].arrival_s == 50);  // from the window's start

  const std::string head = "num_gpu,creation_time,scheduled_time,deletion_time\n";
  const std::pair<std::string, const char*> bad[] = {
      {head + "two,1,1,2\n", "line 2: num_gpu=\"two\""},
      {head + "1,-5,1,2\n", "creation_time=\"-5\""},
      {head + "1,10,5,20\n", "scheduled_time=\"5\""},
      {head + "1,10,10,5\n", "deletion_time=\"5\""},
      {head + "1,10,10\n", "expected 4 fields"},
      {"num_gpu,creation_time\n1,2\n", "lacks column scheduled_time"},
  };
  for (const auto& [text, want] : bad) {
    DYNAMIC_SECTION(want) {
      Status s = ImportAlibabaGpu2023(text, "ali.csv", ImportOptions{}, &w, nullptr);
      CHECK(s.code() == Status::Code::kInvalidArgument);
      CHECK_THAT(s.message(), Catch::Contains(want) && Catch::Contains("ali.csv"));
    }
  }
}

TEST_CASE("Azure LLM: arrivals from the first request, duration from tokens", "[sim][trace]") {
  const char* csv =
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-11-16 23:59:59.5000000,1000,10\n"
      "2023-11-17 00:00:01.0000000,0,100\n"
      "2023-11-17 00:10:00.0000000,10,1\n";
  ImportOptions opt;
  opt.prefill_s_per_token = 0.001;
  opt.decode_s_per_token = 0.05;
  opt.request_overhead_s = 0.5;
  opt.hours = 0.1;  // 6 minutes: the last request is out
  Workload w;
  REQUIRE(ImportAzureLlm2023(csv, "llm", opt, &w, nullptr).ok());
  REQUIRE(w.tasks.size() == 2);
  CHECK(w.tasks[0].arrival_s == 0);
  CHECK(w.tasks[0].duration_s == Approx(0.5 + 1.0 + 0.5));
  CHECK(w.tasks[1].arrival_s == Approx(1.5));  // across midnight
  CHECK(w.tasks[1].duration_s == Approx(0.5 + 5.0));

  const std::string head = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  const std::pair<std::string, const char*> bad[] = {
      {head + "2023-11-16 18:17:03.9,10,1\n2023/11/16 18:17:04,10,1\n", "line 3: TIMESTAMP"},
      {head + "2023-02-30 00:00:00,10,1\n", "TIMESTAMP=\"2023-02-30"},
      {head + "2023-11-16 18:17:03,-1,1\n", "ContextTokens=\"-1\""},
      {head + "2023-11-16 18:17:03,1,1.5\n", "GeneratedTokens=\"1.5\""},
      {head, "no requests"},
      {"when,ContextTokens,GeneratedTokens\n", "lacks column TIMESTAMP"},
  };
  for (const auto& [text, want] : bad) {
    DYNAMIC_SECTION(want) {
      Status s = ImportAzureLlm2023(text, "llm.csv", ImportOptions{}, &w, nullptr);
      CHECK(s.code() == Status::Code::kInvalidArgument);
      CHECK_THAT(s.message(), Catch::Contains(want) && Catch::Contains("llm.csv"));
    }
  }
}

TEST_CASE("An imported workload survives the workload CSV", "[sim][trace]") {
  ImportOptions opt;
  opt.top = 3;
  Workload w, back;
  REQUIRE(ImportAzureFunctions2019(kInvocations, kDurations, "azf", opt, &w, nullptr).ok());
  REQUIRE(ParseWorkloadCsv(FormatWorkloadCsv(w), "azf", &back).ok());
  CHECK(back.tasks.size() == w.tasks.size());
  CHECK(back.horizon_s == w.horizon_s);
}

}  // namespace
}  // namespace warmpool::sim
