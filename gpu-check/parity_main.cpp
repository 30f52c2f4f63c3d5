// gpu_parity: CPU and CUDA backends give bit-identical packed scores, histograms, thresholds and
// masks on synthetic pairs (clean, gain/offset + noise, 1 px misregistered), for every method
// (IR-MAD fitted on the host), band count 1..8 and a rotation of normalisation / threshold /
// morphology / MMU / strip / histogram-stride / magnitude-smoothing options (all of them on
// 4-band CVA, NDVI and IR-MAD). The reference is the CPU
// backend on one thread with the image as one strip; the candidates are the CPU backend on
// several threads with strips and, when a CUDA device is usable, the CUDA backend.
// Usage: gpu_parity [--json FILE] [--threads N]. Exit 0 all identical, 1 a difference, 2 usage.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gpu-check/core_run.h"
#include "imagery/cuda/gpu_backend.h"
#include "imagery/imagery_error.h"

namespace warmpool::gpucheck {
namespace {

using imagery::Method;

std::vector<CoreCase> OptionSets() {
  // clang-format off
  return {
      // norm                 threshold                        open close mmu strip stride smooth
      {Method::kCva, 4, Norm::kNone,           Threshold::kOtsu,               1, 0, 16, 64,  1,  0},
      {Method::kCva, 4, Norm::kGainOffset,     Threshold::kKittlerIllingworth, 2, 1, 0,  100, 1,  0},
      {Method::kCva, 4, Norm::kHistogramMatch, Threshold::kQuantile95,         0, 0, 5,  37,  2,  0},
      {Method::kCva, 4, Norm::kGainOffset,     Threshold::kOtsu,               1, 1, 30, 0,   4,  0},
      {Method::kCva, 4, Norm::kNone,           Threshold::kKittlerIllingworth, 0, 2, 2,  1,   1,  0},
      {Method::kCva, 4, Norm::kGainOffset,     Threshold::kFixedBin,           3, 0, 16, 256, 16, 0},
      {Method::kCva, 4, Norm::kStandardize,    Threshold::kEm,                 0, 0, 16, 64,  1,  1},
      {Method::kCva, 4, Norm::kStandardize,    Threshold::kOtsu,               1, 0, 0,  50,  4,  2},
  };
  // clang-format on
}

std::vector<CoreCase> Cases() {
  const std::vector<CoreCase> sets = OptionSets();
  std::vector<CoreCase> cases;
  size_t k = 0;
  for (Method m :
       {Method::kAbsDiff, Method::kLogRatio, Method::kCva, Method::kNdvi, Method::kIrMad}) {
    for (int bands = 1; bands <= imagery::kMaxBands; ++bands) {
      if (m == Method::kNdvi && bands < 2) {
        continue;  // NDVI needs a red and a NIR band
      }
      const bool all =
          bands == 4 && (m == Method::kCva || m == Method::kNdvi || m == Method::kIrMad);
      for (size_t s = 0; s < sets.size(); ++s) {
        if (all || s == k % sets.size()) {
          CoreCase c = sets[s];
          c.method = m;
          c.band_count = bands;
          if (m == Method::kIrMad) {
            c.norm = Norm::kIrMad;  // its own fit (host) replaces the normalisation
          }
          cases.push_back(c);
        }
      }
      ++k;
    }
  }
  return cases;
}

int Run(int threads, const std::string& json_path) {
  const bool gpu = imagery::CudaDeviceCount() > 0;
  std::printf("gpu_parity: CUDA compiled in: %s, devices: %d; CPU threads: %d\n",
              imagery::CudaCompiledIn() ? "yes" : "no", imagery::CudaDeviceCount(), threads);
  const std::vector<CoreCase> cases = Cases();
  int compared = 0, failed = 0;
  std::string first_failure;
  imagery::ComputeBackendPtr reference = imagery::MakeCpuBackend(1);
  imagery::ComputeBackendPtr cpu = imagery::MakeCpuBackend(threads);
  imagery::ComputeBackendPtr cuda = gpu ? imagery::MakeCudaBackend(0) : nullptr;
  for (PairKind kind : {PairKind::kClean, PairKind::kGainOffset, PairKind::kMisregistered}) {
    PairOptions po;
    po.kind = kind;
    po.seed = 7 + static_cast<uint64_t>(kind);
    po.threads = threads;
    const CorePair pair = MakePair(po);
    for (const CoreCase& c : cases) {
      const Prepared in = Prepare(pair, c);
      CoreCase whole = c;
      whole.strip_rows = 0;
      const CoreResult expect = RunCore(*reference, in, whole);
      std::vector<imagery::ComputeBackend*> candidates = {cpu.get()};
      if (cuda) {
        candidates.push_back(cuda.get());
      }
      for (imagery::ComputeBackend* backend : candidates) {
        const CoreResult got = RunCore(*backend, in, c);
        const std::string diff = FirstDifference(expect, got);
        ++compared;
        if (!diff.empty()) {
          ++failed;
          const std::string line =
              std::string(PairKindName(kind)) + " " + c.Name() + " " + got.device + ": " + diff;
          std::printf("DIFF %s\n", line.c_str());
          if (first_failure.empty()) {
            first_failure = line;
          }
        }
      }
    }
    std::printf("  %-18s %zu cases compared\n", PairKindName(kind), cases.size());
  }
  std::printf("gpu_parity: %d comparisons, %d differ%s\n", compared, failed,
              gpu ? "" : " (CPU only: no CUDA device, the GPU comparison was skipped)");
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    std::string escaped;
    for (char ch : first_failure) {
      if (ch == '"' || ch == '\\') {
        escaped += '\\';
      }
      escaped += ch;
    }
    out << "{\"gpu\": " << (gpu ? "true" : "false") << ", \"comparisons\": " << compared
        << ", \"cases_per_pair\": " << cases.size() << ", \"pairs\": 3, \"differ\": " << failed
        << ", \"first_difference\": \"" << escaped << "\"}\n";
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace warmpool::gpucheck

int main(int argc, char** argv) {
  std::string json_path;
  int threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: gpu_parity [--json FILE] [--threads N]\n");
      return 2;
    }
  }
  try {
    return warmpool::gpucheck::Run(threads, json_path);
  } catch (const warmpool::imagery::ImageryError& e) {
    std::fprintf(stderr, "gpu_parity: %s\n", e.what());
    return 1;
  }
}
