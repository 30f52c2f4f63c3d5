#pragma once

// Public cluster and serverless traces -> workloads (docs/sim.md, "Importing real traces").
// Pure: text in, Workload out (the caller reads the files). Bad input is InvalidArgument naming
// the trace, the line and the field; nothing is guessed.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/workload.h"

namespace warmpool::sim {

enum class TraceFormat { kAlibabaGpu2023, kAzureFunctions2019, kAzureLlm2023 };

// "alibaba-gpu-2023", "azure-functions-2019", "azure-llm-2023". False for anything else.
bool ParseTraceFormat(std::string_view name, TraceFormat* out);

struct ImportOptions {
  // Window [start_hour, start_hour + hours) in hours from the trace's zero (Azure Functions:
  // minute 1 of the day; Alibaba: creation_time 0; Azure LLM: the first request). Arrivals in the
  // workload are seconds from the window's start.
  double start_hour = 0;
  double hours = 8;
  uint64_t seed = 1;            // per-minute spreading and duration draws
  double duration_scale = 1.0;  // every duration is multiplied by this (> 0)

  // Azure Functions 2019: which functions (merged into one workload, queue = hash prefix).
  std::vector<std::string> functions;  // hashes or unique prefixes (>= 8 characters)
  int top = 0;                         // else the `top` busiest functions in the window
  std::string trigger;                 // with `top`: only this trigger (needs a Trigger column)
  bool even_spread = false;            // false: uniform i.i.d. within the minute; true: evenly

  // Alibaba GPU 2023.
  bool one_task_per_gpu = true;  // a pod asking n GPUs is n tasks; false: one task per pod
  double max_duration_h = 24;    // longer run times are clipped to this (counted in the summary)

  // Azure LLM 2023: duration = overhead + context * prefill + generated * decode (one request per
  // GPU worker at a time, no batching).
  double prefill_s_per_token = 0.0005;
  double decode_s_per_token = 0.03;
  double request_overhead_s = 0.1;
};

// The three importers. `name` names the trace in errors and the workload; `summary` (if not null)
// gets one human-readable line: what was selected, dropped and clipped.
Status ImportAlibabaGpu2023(std::string_view pods_csv, const std::string& name,
                            const ImportOptions& opt, Workload* out, std::string* summary);
Status ImportAzureFunctions2019(std::string_view invocations_csv, std::string_view durations_csv,
                                const std::string& name, const ImportOptions& opt, Workload* out,
                                std::string* summary);
Status ImportAzureLlm2023(std::string_view requests_csv, const std::string& name,
                          const ImportOptions& opt, Workload* out, std::string* summary);

// Piecewise-linear inverse CDF through (probability, value) knots, probabilities increasing from
// 0 to 1 and values non-decreasing. u in [0, 1]. Exposed for tests.
double PiecewiseLinearQuantile(const std::vector<std::pair<double, double>>& knots, double u);

}  // namespace warmpool::sim
