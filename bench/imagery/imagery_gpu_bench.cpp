// imagery_gpu_bench: per-kernel GB/s and Gpx/s on a device-resident pair, and the end-to-end time
// of the overlapped 2-stream pipeline from host memory, as JSON lines.
#include <chrono>
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/imagery/cuda_kernel_bench.h"
#include "imagery/change_detection.h"
#include "imagery/cuda/gpu_backend.h"
#include "imagery/imagery_error.h"
#include "imagery/testing/synthetic_pair.h"
#include "imagery/threshold.h"

namespace {

using namespace warmpool::imagery;
using namespace warmpool::imagery::bench;

// Kernel timings on a side x side pair: a smooth pattern with a few bright blocks, 4 bands.
void PrintKernelTimings(int device, int side, int repeats) {
  const size_t n = static_cast<size_t>(side) * side;
  std::vector<uint16_t> before(n * 4), after(n * 4);
  for (size_t b = 0; b < 4; ++b) {
    for (size_t i = 0; i < n; ++i) {
      const size_t x = i % side, y = i / side;
      const auto v = static_cast<uint16_t>(800 + 400 * b + (x * 7 + y * 13) % 251);
      before[b * n + i] = v;
      after[b * n + i] = static_cast<uint16_t>((x / 64 + y / 64) % 17 == 0 ? v + 1500 : v + i % 5);
    }
  }
  FusedParams p;
  p.band_count = 4;
  p.inv_band_count = 0.25f;
  p.scale = 2.0f;
  MaskParams m;
  m.threshold_bin = 200;
  m.min_area_px = 16;
  const CudaKernelReport r = BenchmarkCudaKernels(
      device, HostPair{side, side, 4, before.data(), after.data()}, p, m,
      [](const std::vector<uint64_t>& h) { return OtsuThreshold(h); }, repeats);
  for (const KernelTiming& k : r.kernels) {
    const nlohmann::json line = {{"kernel", k.kernel},
                                 {"bytes", k.bytes},
                                 {"ms", k.ms},
                                 {"gbps", k.Gbps()},
                                 {"gpx_per_s", k.Gpxps()},
                                 {"device", r.device},
                                 {"peak_gbps", r.peak_gbps},
                                 {"size", side}};
    std::cout << line.dump() << std::endl;
  }
}

// End to end from host memory: strips staged through pinned buffers on 2 streams, against the
// CPU backend on the same pixels.
void PrintEndToEnd(int device, int size) {
  SynthOptions s;
  s.width = s.height = size;
  s.object_count = size * size / 4096;
  const SynthPair pair = GenerateSyntheticPair(s);
  ChangeOptions o;
  o.strip_rows = 512;
  for (const char* name : {"cuda", "cpu"}) {
    ComputeBackendPtr backend =
        std::string(name) == "cuda" ? MakeCudaBackend(device) : MakeCpuBackend(2);
    double best = 1e9;
    ChangeMaps maps;
    for (int r = 0; r < 3; ++r) {
      MemoryStripSource b(pair.before, 0), a(pair.after, 0);
      const auto t0 = std::chrono::steady_clock::now();
      maps = ComputeChange(b, a, o, *backend);
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    nlohmann::json line = {{"kernel", std::string("end_to_end_from_host_") + name},
                           {"size", size},
                           {"s", best},
                           {"input_gb", 2.0 * pair.before.pixels.size() * 2 / 1e9},
                           {"device", maps.device}};
    for (const auto& [stage, seconds] : maps.timings) {
      line["stages"][stage] = seconds;
    }
    std::cout << line.dump() << std::endl;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int size = 4096;
  int repeats = 10;
  int device = 0;
  CLI::App app{"imagery_gpu_bench"};
  app.add_option("--size", size, "square image side for the kernel benchmark");
  app.add_option("--repeats", repeats, "timed repetitions per kernel");
  app.add_option("--device", device, "CUDA device ordinal");
  CLI11_PARSE(app, argc, argv);
  try {
    if (CudaDeviceCount() == 0) {
      std::cerr << "imagery_gpu_bench: no CUDA device (compiled in: " << CudaCompiledIn() << ")\n";
      return 2;
    }
    for (int side : {size, 10980}) {
      PrintKernelTimings(device, side, repeats);
    }
    PrintEndToEnd(device, size);
  } catch (const ImageryError& e) {
    std::cerr << "imagery_gpu_bench: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
