// warmpool-sim: replays a workload through warmpool's policy and the baselines on a simulated
// KEDA + HPA + cluster-autoscaler GPU cluster. See docs/SCALING.md.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "common/read_file.h"
#include "sim/keda_grid.h"
#include "sim/recorder.h"
#include "sim/sim_report.h"
#include "sim/simulator.h"
#include "sim/trace_import.h"
#include "sim/tune.h"
#include "sim/workload.h"

namespace {

using warmpool::Status;
namespace sim = warmpool::sim;

bool SplitKeyValue(const std::string& kv, std::string* k, std::string* v) {
  const size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  *k = kv.substr(0, eq);
  *v = kv.substr(eq + 1);
  return true;
}

int Fail(const std::string& msg) {
  std::fprintf(stderr, "warmpool-sim: %s\n", msg.c_str());
  return 2;
}

Status LoadWorkload(const std::string& spec, uint64_t seed, sim::Workload* w) {
  if (sim::GenerateWorkload(spec, seed, w)) return Status::Ok();
  std::string text;
  if (!warmpool::ReadWholeFile(spec, &text)) {
    return Status::InvalidArgument("--workload \"" + spec +
                                   "\": neither W1..W5, office, weekly, drift nor a readable CSV");
  }
  return sim::ParseWorkloadCsv(text, spec, w);
}

Status ReadFile(const std::string& path, std::string* out) {
  if (!warmpool::ReadWholeFile(path, out)) {
    return Status::InvalidArgument("cannot read \"" + path + "\"");
  }
  return Status::Ok();
}

// `import`: reads the trace file(s), converts (sim/trace_import.h), writes the workload CSV.
Status ImportTrace(const std::string& format, const std::string& in, const std::string& durations,
                   const sim::ImportOptions& opt, const std::string& out_path) {
  sim::TraceFormat f{};
  if (!sim::ParseTraceFormat(format, &f)) return Status::InvalidArgument("--format " + format);
  std::string text, dur_text, summary;
  if (Status s = ReadFile(in, &text); !s.ok()) return s;
  sim::Workload w;
  Status s = Status::Ok();
  if (f == sim::TraceFormat::kAzureFunctions2019) {
    if (durations.empty()) return Status::InvalidArgument("azure-functions-2019 needs --durations");
    if (s = ReadFile(durations, &dur_text); !s.ok()) return s;
    s = sim::ImportAzureFunctions2019(text, dur_text, in, opt, &w, &summary);
  } else if (f == sim::TraceFormat::kAlibabaGpu2023) {
    s = sim::ImportAlibabaGpu2023(text, in, opt, &w, &summary);
  } else {
    s = sim::ImportAzureLlm2023(text, in, opt, &w, &summary);
  }
  if (!s.ok()) return s;
  if (w.tasks.empty()) return Status::InvalidArgument(summary + ": no task in the window");
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out << "# " << summary << "\n" << sim::FormatWorkloadCsv(w);
  if (!out.flush()) return Status::InvalidArgument("cannot write \"" + out_path + "\"");
  std::fprintf(stderr, "warmpool-sim import: %s -> %s\n", summary.c_str(), out_path.c_str());
  return Status::Ok();
}

// --policies: exact names, or a prefix ending in '*' (`keda-ll*` = the whole KEDA grid).
bool Selected(const std::vector<std::string>& only, const std::string& name) {
  if (only.empty()) return true;
  return std::any_of(only.begin(), only.end(), [&](const std::string& o) {
    if (!o.empty() && o.back() == '*')
      return name.compare(0, o.size() - 1, o, 0, o.size() - 1) == 0;
    return o == name;
  });
}

// `tune`: parses its options, runs sim::RunTune, prints the report and writes the patch.
int Tune(const std::string& spec, const std::vector<std::string>& metas,
         const std::vector<std::string>& clusters, const std::string& slo, int64_t seeds,
         int64_t jobs, const std::string& format, const std::string& patch_path) {
  sim::TuneOptions o;
  o.seeds = seeds;
  o.jobs = jobs;
  o.load = [&](uint64_t seed, sim::Workload* w) { return LoadWorkload(spec, seed, w); };
  for (const auto& kv : metas) {
    std::string k, v;
    if (!SplitKeyValue(kv, &k, &v)) return Fail("--meta \"" + kv + "\": want key=value");
    o.meta[k] = v;
  }
  for (const auto& kv : clusters) {
    std::string k, v;
    if (!SplitKeyValue(kv, &k, &v)) return Fail("--cluster \"" + kv + "\": want key=value");
    if (Status s = sim::ApplyClusterOption(k, v, &o.cluster); !s.ok()) return Fail(s.ToString());
  }
  if (!slo.empty()) {
    std::string k, v;
    char* end = nullptr;
    if (SplitKeyValue(slo, &k, &v)) o.slo_p95 = std::strtod(v.c_str(), &end);
    if (k != "p95" || end == v.c_str() || *end != '\0' || o.slo_p95 < 0)
      return Fail("--slo \"" + slo + "\": want p95=SECONDS (>= 0)");
  }
  sim::TuneResult r;
  if (Status s = sim::RunTune(o, std::cerr, &r); !s.ok()) return Fail(s.ToString());
  if (!patch_path.empty()) {
    std::ofstream out(patch_path, std::ios::binary | std::ios::trunc);
    out << sim::ScaledObjectPatch(r.recommended.meta);
    if (!out.flush()) return Fail("cannot write \"" + patch_path + "\"");
  }
  std::fputs(format == "json" ? (sim::TuneReportJson(r) + "\n").c_str()
                              : sim::TuneReportTable(r, patch_path).c_str(),
             stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"warmpool-sim: compare GPU warm-pool scaling policies on a simulated cluster"};
  app.require_subcommand(1);

  std::string workload_spec, format = "table";
  std::vector<std::string> metas, clusters, only, scaledobject;
  uint64_t seed = 1;
  int64_t timeline = 0;
  CLI::App* run = app.add_subcommand("run", "simulate warmpool and the baselines on a workload");
  run->add_option("--workload", workload_spec, "W1..W5 or a CSV file")->required();
  run->add_option("--meta", metas, "warmpool ScaledObject metadata key=value (repeatable)");
  run->add_option("--cluster", clusters, "cluster setting key=value (repeatable), see docs");
  run->add_option("--scaledobject", scaledobject,
                  "warmpool's ScaledObject/HPA/pod setting key=value (repeatable), see docs");
  run->add_option("--seed", seed, "seed for workload generators and the cluster")
      ->check(warmpool::Uint64Text());
  run->add_option("--format", format, "json or table")->check(CLI::IsMember({"json", "table"}));
  run->add_option("--timeline", timeline, "record a timeline sample every N seconds (json)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--policies", only, "only these policies (comma-separated; name* = prefix)")
      ->delimiter(',');
  std::string grid;
  run->add_option("--grid", grid, "also run a grid of baselines: keda (sim/keda_grid.h)")
      ->check(CLI::IsMember({"keda"}));

  CLI::App* gen = app.add_subcommand("generate", "print a generated workload as CSV");
  gen->add_option("--workload", workload_spec, "W1..W5")->required();
  gen->add_option("--seed", seed, "seed")->check(warmpool::Uint64Text());

  sim::RecordOptions rec;
  CLI::App* record = app.add_subcommand("record", "sample a live Redis queue into a workload CSV");
  record->add_option("--redis", rec.redis_url, "redis://[user:pass@]host:port[/db]")->required();
  record->add_option("--queues", rec.queues, "Celery queues")->delimiter(',')->required();
  record->add_option("--key-prefix", rec.key_prefix, "kombu global_keyprefix");
  record->add_option("--interval-ms", rec.interval_ms, "sampling period (ms)");
  record->add_option("--duration-s", rec.duration_s, "how long to record (s)")->required();
  record->add_option("--out", rec.out_path, "CSV file to write")->required();

  std::string imp_format, imp_in, imp_durations, imp_out;
  sim::ImportOptions imp;
  CLI::App* imp_cmd = app.add_subcommand("import", "convert a public trace into a workload CSV");
  imp_cmd
      ->add_option("--format", imp_format, "alibaba-gpu-2023|azure-functions-2019|azure-llm-2023")
      ->required();
  imp_cmd->add_option("--in", imp_in, "trace file (Azure Functions: the invocations file)")
      ->required();
  imp_cmd->add_option("--durations", imp_durations, "Azure Functions: the durations file");
  imp_cmd->add_option("--out", imp_out, "workload CSV to write")->required();
  imp_cmd->add_option("--start-hour", imp.start_hour, "window start, hours from the trace's zero");
  imp_cmd->add_option("--hours", imp.hours, "window length (hours)");
  imp_cmd->add_option("--seed", imp.seed, "seed of the per-minute spreading and duration draws")
      ->check(warmpool::Uint64Text());
  imp_cmd->add_option("--duration-scale", imp.duration_scale, "multiply every duration");
  imp_cmd->add_option("--function", imp.functions, "Azure Functions: HashFunction (or prefix)");
  imp_cmd->add_option("--top", imp.top, "Azure Functions: the N busiest functions in the window");
  imp_cmd->add_option("--trigger", imp.trigger, "Azure Functions: with --top, only this trigger");
  imp_cmd->add_flag("--even-spread", imp.even_spread,
                    "Azure Functions: space a minute's calls evenly");
  imp_cmd->add_option("--max-duration-h", imp.max_duration_h, "Alibaba: clip run times (hours)");
  imp_cmd->add_flag("!--one-task-per-pod", imp.one_task_per_gpu, "Alibaba: not one task per GPU");
  imp_cmd->add_option("--prefill-s-per-token", imp.prefill_s_per_token, "Azure LLM: prefill time");
  imp_cmd->add_option("--decode-s-per-token", imp.decode_s_per_token, "Azure LLM: decode time");
  imp_cmd->add_option("--overhead-s", imp.request_overhead_s, "Azure LLM: per-request time");

  std::string tune_slo, tune_patch;
  int64_t tune_seeds = 3;
  int64_t tune_jobs = std::max<int64_t>(1, std::thread::hardware_concurrency());
  CLI::App* tune =
      app.add_subcommand("tune", "sweep warmpool's keys on a workload, vs KEDA's grid");
  tune->add_option("--workload", workload_spec, "a recorded/imported CSV or W1..W5")->required();
  tune->add_option("--meta", metas, "warmpool metadata key=value kept fixed (repeatable)");
  tune->add_option("--cluster", clusters, "cluster setting key=value (repeatable)");
  tune->add_option("--slo", tune_slo, "p95=SECONDS: the queue-wait SLO");
  tune->add_option("--seeds", tune_seeds, "seeds per configuration (medians)");
  tune->add_option("--jobs", tune_jobs, "simulations in parallel (default: the CPU count)");
  tune->add_option("--format", format, "json or table")->check(CLI::IsMember({"json", "table"}));
  tune->add_option("--out-patch", tune_patch, "write the ScaledObject patch (JSON6902) here");

  warmpool::AddVersionFlag(app, "warmpool-sim");
  WARMPOOL_CLI_PARSE(app, argc, argv);

  if (*gen) {
    sim::Workload w;
    if (!sim::GenerateWorkload(workload_spec, seed, &w)) {
      return Fail("--workload \"" + workload_spec +
                  "\": generators are W1..W5, office, weekly, drift");
    }
    std::fputs(sim::FormatWorkloadCsv(w).c_str(), stdout);
    return 0;
  }
  if (*imp_cmd) {
    Status s = ImportTrace(imp_format, imp_in, imp_durations, imp, imp_out);
    return s.ok() ? 0 : Fail(s.ToString());
  }
  if (*record) {
    Status s = sim::RecordQueue(rec, std::cerr);
    return s.ok() ? 0 : Fail(s.ToString());
  }

  if (*tune)
    return Tune(workload_spec, metas, clusters, tune_slo, tune_seeds, tune_jobs, format,
                tune_patch);
  sim::Workload w;
  if (Status s = LoadWorkload(workload_spec, seed, &w); !s.ok()) return Fail(s.ToString());
  std::map<std::string, std::string> meta;
  for (const auto& kv : metas) {
    std::string k, v;
    if (!SplitKeyValue(kv, &k, &v)) return Fail("--meta \"" + kv + "\": want key=value");
    meta[k] = v;
  }
  sim::ClusterConfig cluster;
  for (const auto& kv : clusters) {
    std::string k, v;
    if (!SplitKeyValue(kv, &k, &v)) return Fail("--cluster \"" + kv + "\": want key=value");
    if (Status s = sim::ApplyClusterOption(k, v, &cluster); !s.ok()) return Fail(s.ToString());
  }
  std::vector<sim::PolicySpec> policies = sim::DefaultPolicies(meta, w, cluster);
  if (grid == "keda") {
    for (auto& p : sim::KedaGrid(w, cluster)) policies.push_back(std::move(p));
  }
  std::vector<sim::SimResult> results;
  for (auto p : policies) {
    if (p.kind == sim::PolicyKind::kWarmpool) {
      for (const auto& kv : scaledobject) {
        std::string k, v;
        if (!SplitKeyValue(kv, &k, &v))
          return Fail("--scaledobject \"" + kv + "\": want key=value");
        if (Status s = sim::ApplyScaledObjectOption(k, v, &p); !s.ok()) return Fail(s.ToString());
      }
    }
    if (!Selected(only, p.name)) continue;
    sim::SimResult r;
    if (Status s = sim::Simulate(w, p, cluster, seed, timeline, &r); !s.ok()) {
      return Fail(s.ToString());
    }
    results.push_back(std::move(r));
  }
  if (format == "json") {
    std::puts(sim::RunReportJson(w.name, seed, cluster, results, timeline > 0).c_str());
  } else {
    std::fputs(sim::RunReportTable(w.name, seed, results).c_str(), stdout);
  }
  return 0;
}
