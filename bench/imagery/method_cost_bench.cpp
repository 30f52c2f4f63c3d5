// imagery_method_bench: the cost of each change-detection method, as ratios against the baseline
// (CVA + PIF + Otsu, the fused CVA pass) measured in the same run.
//
// ComputeChange runs on in-memory synthetic pairs (a 4-band and a 3-band uint16 one) through the
// CPU backend, once per configuration per round; configurations are interleaved within a round so
// load from other processes hits all alike, and every figure is the median over the rounds of
// that stage's time (ChangeMaps::timings) in ms per megapixel. Then IR-MAD's fit alone on the
// decimated sample, for several --irmad-max-pixels.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <time.h>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/imagery/bench_common.h"
#include "imagery/change_detection.h"
#include "imagery/irmad.h"
#include "imagery/testing/synthetic_pair.h"

namespace {

using namespace warmpool::imagery;
using warmpool::imagery::bench::Median;
using Clock = std::chrono::steady_clock;

// CPU seconds of this process so far: beside the wall-clock stages, a figure that load from other
// processes on a shared machine does not inflate (with --threads 1 the pipeline runs on one core).
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

struct Config {
  const char* name;
  Method method;
  Normalization normalization;
  ThresholdMethod threshold;
  int smooth_radius;
};

// The first is the baseline: the fused CVA pass every ratio is taken against.
// clang-format off
const std::vector<Config> kConfigs = {
    {"cva+pif+otsu",             Method::kCva,      Normalization::kPif,         ThresholdMethod::kOtsu,               0},
    {"cva+standardize+otsu",     Method::kCva,      Normalization::kStandardize, ThresholdMethod::kOtsu,               0},
    {"cva+standardize+em+smooth1", Method::kCva,    Normalization::kStandardize, ThresholdMethod::kEm,                 1},
    {"irmad+ki",                 Method::kIrMad,    Normalization::kNone,        ThresholdMethod::kKittlerIllingworth, 0},
    {"irmad+em",                 Method::kIrMad,    Normalization::kNone,        ThresholdMethod::kEm,                 0},
    {"absdiff+pif+otsu",         Method::kAbsDiff,  Normalization::kPif,         ThresholdMethod::kOtsu,               0},
    {"logratio+pif+otsu",        Method::kLogRatio, Normalization::kPif,         ThresholdMethod::kOtsu,               0},
};
// clang-format on

// The stages reported, in pipeline order: "compute_total" is the whole ComputeChange's wall
// time, "compute_cpu" its process CPU time.
const std::vector<std::string> kStages = {"normalize_fit", "fused_pass",  "smooth",
                                          "threshold",     "mask_filter", "compute_total",
                                          "compute_cpu"};

struct Samples {
  std::map<std::string, std::vector<double>> seconds;  // stage -> one per round
  int irmad_iterations = 0;
  bool irmad_converged = false;
  double changed_fraction = 0;
};

struct PairRun {
  std::string label;
  SynthPair pair;
  std::vector<Samples> samples;  // per config
};

ChangeOptions OptionsFor(const Config& c, int threads) {
  ChangeOptions o;
  o.method = c.method;
  o.normalization = c.normalization;
  o.threshold = c.threshold;
  o.smooth_radius = c.smooth_radius;
  o.threads = threads;
  return o;
}

void RunOnce(const SynthPair& pair, const Config& c, int threads, ComputeBackend& backend,
             Samples* out) {
  MemoryStripSource before(pair.before, 0), after(pair.after, 0);
  const double cpu0 = ProcessCpuSeconds();
  const ChangeMaps maps = ComputeChange(before, after, OptionsFor(c, threads), backend);
  const double cpu_s = ProcessCpuSeconds() - cpu0;
  if (out == nullptr) {
    return;  // warm-up
  }
  out->seconds["compute_cpu"].push_back(cpu_s);
  for (const auto& [stage, s] : maps.timings) {
    out->seconds[stage].push_back(s);
  }
  out->irmad_iterations = maps.irmad.iterations;
  out->irmad_converged = maps.irmad.converged;
  out->changed_fraction = maps.valid_pixels ? double(maps.changed_pixels) / maps.valid_pixels : 0;
}

std::string Cell(double ms_per_mpx, double ratio) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f (%.2f)", ms_per_mpx, ratio);
  return buf;
}

// Median seconds of IR-MAD's fit alone, for each max_pixels, on the pipeline's decimated sample.
nlohmann::ordered_json FitSweep(const PairRun& run, int sample_side,
                                const std::vector<size_t>& max_pixels, int repeats,
                                std::ostringstream& md) {
  MemoryStripSource before(run.pair.before, 0), after(run.pair.after, 0);
  const int sw = std::min(before.width(), sample_side);
  const int sh = std::min(before.height(), sample_side);
  PixelSample sample;
  sample.band_count = before.band_count();
  sample.count = static_cast<size_t>(sw) * sh;
  sample.before.resize(sample.count * sample.band_count);
  sample.after.resize(sample.count * sample.band_count);
  before.ReadSample(sw, sh, sample.before.data());
  after.ReadSample(sw, sh, sample.after.data());
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<std::vector<double>> times(max_pixels.size());
  std::vector<IrMadFit> fits(max_pixels.size());
  for (int r = 0; r < repeats; ++r) {
    for (size_t k = 0; k < max_pixels.size(); ++k) {
      IrMadOptions io;
      io.max_pixels = max_pixels[k];
      const auto t0 = Clock::now();
      fits[k] = FitIrMad(sample, 0, 0, io);
      times[k].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
  }
  char line[256];
  for (size_t k = 0; k < max_pixels.size(); ++k) {
    const double ms = Median(times[k]) * 1e3;
    const IrMadFit& f = fits[k];
    const double ns_per_px_it =
        f.iterations && f.pixels ? ms * 1e6 / f.iterations / static_cast<double>(f.pixels) : 0;
    std::snprintf(line, sizeof(line), "| %s | %zu | %zu | %.1f | %.1f | %d | %s | %.4f |\n",
                  run.label.c_str(), max_pixels[k], f.pixels, ms, ns_per_px_it, f.iterations,
                  f.converged ? "yes" : "no", f.rho.empty() ? 0.0 : f.rho.back());
    md << line;
    rows.push_back({{"pair", run.label},
                    {"max_pixels", max_pixels[k]},
                    {"pixels", f.pixels},
                    {"fit_ms", ms},
                    {"ns_per_pixel_per_iteration", ns_per_px_it},
                    {"iterations", f.iterations},
                    {"converged", f.converged},
                    {"rho", f.rho}});
  }
  return rows;
}

PairRun MakeRun(int side, int bands) {
  SynthOptions so;
  so.width = so.height = side;
  so.band_count = bands;
  so.object_count = static_cast<int>(static_cast<size_t>(side) * side / 4096);
  return {std::to_string(bands) + "-band " + std::to_string(side) + "x" + std::to_string(side),
          GenerateSyntheticPair(so), std::vector<Samples>(kConfigs.size())};
}

// Every configuration on every pair: one warm-up round (page faults, first-touch allocations),
// then `repeats` rounds, each running all of them in turn.
void MeasureAll(std::vector<PairRun>& runs, int threads, int repeats) {
  ComputeBackendPtr cpu = MakeCpuBackend(threads);
  for (const PairRun& run : runs) {
    for (const Config& c : kConfigs) {
      RunOnce(run.pair, c, threads, *cpu, nullptr);
    }
  }
  for (int r = 0; r < repeats; ++r) {
    for (PairRun& run : runs) {
      for (size_t c = 0; c < kConfigs.size(); ++c) {
        RunOnce(run.pair, kConfigs[c], threads, *cpu, &run.samples[c]);
      }
    }
  }
}

// One pair's Markdown table (appended to `md`) and its JSON, every figure against the baseline
// (kConfigs[0]) of the same pair.
nlohmann::ordered_json PairTable(const PairRun& run, std::ostringstream& md) {
  const double mpx = static_cast<double>(run.pair.before.width) * run.pair.before.height / 1e6;
  const auto ms_per_mpx = [&](const Samples& s, const std::string& stage) {
    const auto it = s.seconds.find(stage);
    return it == s.seconds.end() ? 0.0 : Median(it->second) * 1e3 / mpx;
  };
  const double base_fused = ms_per_mpx(run.samples[0], "fused_pass");
  const double base_total = ms_per_mpx(run.samples[0], "compute_total");
  const double base_cpu = ms_per_mpx(run.samples[0], "compute_cpu");
  char intro[256];
  std::snprintf(intro, sizeof(intro),
                "\n%s uint16 pair. Stage cells: ms per megapixel (ratio to the baseline's fused "
                "pass, %.2f ms/Mpx); total (wall) and CPU: ms/Mpx (ratio to the baseline's, "
                "%.2f and %.2f ms/Mpx).\n\n",
                run.label.c_str(), base_fused, base_total, base_cpu);
  md << intro
     << "| method | total | CPU | normalize_fit | fused_pass | smooth | threshold | "
        "mask_filter | IR-MAD iterations | changed |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  nlohmann::ordered_json pair_json = {
      {"pair", run.label}, {"megapixels", mpx}, {"configs", nlohmann::ordered_json::array()}};
  for (size_t c = 0; c < kConfigs.size(); ++c) {
    const Samples& s = run.samples[c];
    const bool irmad = kConfigs[c].method == Method::kIrMad;
    md << "| " << kConfigs[c].name << " | "
       << Cell(ms_per_mpx(s, "compute_total"), ms_per_mpx(s, "compute_total") / base_total) << " | "
       << Cell(ms_per_mpx(s, "compute_cpu"), ms_per_mpx(s, "compute_cpu") / base_cpu);
    nlohmann::ordered_json stages = nlohmann::ordered_json::object();
    for (const std::string& stage : kStages) {
      const double v = ms_per_mpx(s, stage);
      if (stage != "compute_total" && stage != "compute_cpu") {
        md << " | " << Cell(v, v / base_fused);
      }
      stages[stage] = {{"ms_per_mpx", v},
                       {"over_baseline_fused_pass", v / base_fused},
                       {"over_baseline_total", v / base_total}};
      if (stage == "compute_cpu") {
        stages[stage]["over_baseline_cpu"] = v / base_cpu;
      }
    }
    char tail[96];
    std::snprintf(tail, sizeof(tail), " | %s | %.2f %% |\n",
                  irmad ? (std::to_string(s.irmad_iterations) +
                           (s.irmad_converged ? " (converged)" : " (not converged)"))
                              .c_str()
                        : "-",
                  100.0 * s.changed_fraction);
    md << tail;
    nlohmann::ordered_json cj = {
        {"config", kConfigs[c].name}, {"stages", stages}, {"changed_fraction", s.changed_fraction}};
    if (irmad) {
      cj["irmad_iterations"] = s.irmad_iterations;
      cj["irmad_converged"] = s.irmad_converged;
    }
    pair_json["configs"].push_back(cj);
  }
  return pair_json;
}

}  // namespace

int main(int argc, char** argv) {
  int size = 2048;
  int size_rgb = 2048;
  int threads = 1;
  int repeats = 5;
  int sample_side = ChangeOptions{}.sample_side;
  std::vector<size_t> irmad_max_pixels = {16384, 65536, 262144, 1048576};
  std::string json_path;
  CLI::App app{"imagery_method_bench: cost of each change-detection method vs the fused CVA pass"};
  app.add_option("--size", size, "side of the 4-band uint16 pair")->check(CLI::Range(64, 16384));
  app.add_option("--size-rgb", size_rgb, "side of the 3-band uint16 pair; 0 = none")
      ->check(CLI::Range(0, 16384));
  app.add_option("--threads", threads, "CPU backend threads (1: the figures are CPU time)")
      ->check(CLI::Range(1, 256));
  app.add_option("--repeats", repeats, "interleaved rounds (median of)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--irmad-max-pixels", irmad_max_pixels,
                 "IR-MAD fit sweep: max_pixels values (none or 0: no sweep)")
      ->expected(0, 64);
  app.add_option("--json", json_path, "also write the figures as JSON to this file");
  CLI11_PARSE(app, argc, argv);
  std::erase(irmad_max_pixels, size_t{0});
  std::ostringstream cmd;
  for (int i = 0; i < argc; ++i) {
    cmd << (i ? " " : "") << argv[i];
  }

  std::vector<PairRun> runs;
  runs.push_back(MakeRun(size, 4));
  if (size_rgb > 0) {
    runs.push_back(MakeRun(size_rgb, 3));
  }

  MeasureAll(runs, threads, repeats);

  std::ostringstream md;
  nlohmann::ordered_json report = {{"command", cmd.str()},
                                   {"threads", threads},
                                   {"repeats", repeats},
                                   {"unit", "ms per megapixel, median over rounds"},
                                   {"pairs", nlohmann::ordered_json::array()}};
  md << "\nCommand: `" << cmd.str() << "` (CPU backend, " << threads << " thread"
     << (threads == 1 ? "" : "s") << ", median of " << repeats << " interleaved rounds)\n";
  for (const PairRun& run : runs) {
    report["pairs"].push_back(PairTable(run, md));
  }

  if (!irmad_max_pixels.empty()) {
    md << "\nIR-MAD's fit alone (FitIrMad on the " << sample_side << "x" << sample_side
       << " decimated sample), median of " << repeats << ":\n\n"
       << "| pair | max_pixels | pixels used | fit ms | ns per pixel per iteration | "
          "iterations | converged | largest rho |\n|---|---:|---:|---:|---:|---:|---|---:|\n";
    nlohmann::ordered_json sweep = nlohmann::ordered_json::array();
    for (const PairRun& run : runs) {
      for (auto& row : FitSweep(run, sample_side, irmad_max_pixels, repeats, md)) {
        sweep.push_back(row);
      }
    }
    report["irmad_fit_sweep"] = sweep;
  }
  std::cout << md.str();
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << report.dump(2) << "\n";
    if (!f) {
      std::cerr << "cannot write " << json_path << "\n";
      return 1;
    }
  }
  return 0;
}
