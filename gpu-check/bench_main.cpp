// gpu_bench: the change-detection core on one size x size 4-band uint16 pair (default 10980, a
// Sentinel-2 tile at 10 m): CPU half always (host copy reference, fused pass, morphology,
// components, whole CPU pipeline), GPU half when a CUDA device is usable (kernels on the
// device-resident pair against the same run's device-to-device copy and 4.8 TB/s, the resident
// pipeline, the backend from host memory, and whether its outputs equal the CPU's bit for bit).
// Usage: gpu_bench [--size N] [--repeats N] [--threads N] [--json FILE] [--md FILE]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "gpu-check/core_run.h"
#include "gpu-check/report.h"
#include "imagery/components.h"
#include "imagery/cuda/gpu_backend.h"
#include "imagery/cuda/gpu_benchmark.h"
#include "imagery/imagery_error.h"
#include "imagery/morphology.h"
#include "imagery/parallel_slices.h"
#include "imagery/threshold.h"

namespace warmpool::gpucheck {
namespace {

using imagery::KernelTiming;

constexpr double kH200Gbps = 4800.0;  // H200 HBM3e peak (NVIDIA H200 datasheet)
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Mean wall-clock ms per run of `repeats` runs after one warm-up.
double WallMs(int repeats, const std::function<void()>& run) {
  run();
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    run();
  }
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - t0;
  return elapsed.count() / repeats;
}

const KernelTiming* Find(const std::vector<KernelTiming>& rows, const std::string& name) {
  for (const KernelTiming& k : rows) {
    if (k.kernel == name) {
      return &k;
    }
  }
  return nullptr;
}

struct Args {
  int size = 10980;
  int repeats = 5;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string json, md;
};

int Run(const Args& a) {
  Report report;
  const int n_side = a.size;
  const double px = static_cast<double>(n_side) * n_side;
  const double mpx = px / 1e6;
  report.Add("size", static_cast<double>(n_side), "pair side (px), 4 bands uint16");
  report.Add("cpu_threads", static_cast<double>(a.threads), "CPU backend threads");
  PairOptions po;
  po.width = po.height = n_side;
  po.band_count = 4;
  po.kind = PairKind::kGainOffset;
  po.nodata_border_px = 0;
  po.threads = a.threads;
  CoreCase c;  // cva, 4 bands, PIF gain/offset, Otsu, open 1, MMU 16
  c.strip_rows = 512;
  c.histogram_stride = imagery::HistogramStride(static_cast<size_t>(px));
  auto t0 = std::chrono::steady_clock::now();
  const Prepared in = Prepare(MakePair(po), c);
  report.Add("generate_s",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
             "synthetic pair + PIF fit");
  const size_t n = static_cast<size_t>(px);
  const size_t image_bytes = n * 4 * sizeof(uint16_t);
  const double fused_bytes = 2.0 * image_bytes + 2.0 * n;

  // ---- CPU half ----
  std::vector<uint16_t> copy(n * 4);
  const double cpu_copy_ms = WallMs(a.repeats, [&] {
    imagery::ParallelSlices(a.threads, n * 4, [&](int, size_t b, size_t e) {
      std::memcpy(copy.data() + b, in.before.data() + b, (e - b) * sizeof(uint16_t));
    });
  });
  const double cpu_copy_gbps = 2.0 * image_bytes / (cpu_copy_ms * 1e6);
  report.Add("cpu_copy_GBps", cpu_copy_gbps, "host memcpy of one image, read + write");
  copy = {};
  imagery::ComputeBackendPtr cpu = imagery::MakeCpuBackend(a.threads);
  std::vector<uint16_t> scores(n);
  std::vector<uint64_t> histogram(imagery::kScoreBins);
  const double cpu_fused_ms = WallMs(a.repeats, [&] {
    cpu->Begin(in.params, n_side, n_side, scores.data());
    cpu->FusedStrip(0, n_side, in.before.data(), in.after.data());
    cpu->Histogram(histogram.data());
  });
  const double cpu_fused_gbps = fused_bytes / (cpu_fused_ms * 1e6);
  report.Add("cpu_fused_GBps", cpu_fused_gbps, "fused pass + histogram");
  report.Add("cpu_fused_of_copy", cpu_fused_gbps / cpu_copy_gbps, "of the host copy");
  imagery::MaskParams m;
  m.threshold_bin = imagery::OtsuThreshold(histogram);
  m.open_radius = c.open_radius;
  m.close_radius = c.close_radius;
  m.min_area_px = c.min_area_px;
  std::vector<uint8_t> mask(n), work;
  const double cpu_morph_ms = WallMs(a.repeats, [&] {
    imagery::ThresholdScores(scores.data(), n, m.threshold_bin, mask.data());
    imagery::OpenClose(mask.data(), n_side, n_side, m.open_radius, m.close_radius, a.threads, work);
    imagery::ClearNodata(scores.data(), n, mask.data());
  });
  report.Add("cpu_morphology_Gpxps", px / (cpu_morph_ms * 1e6), "threshold + 3x3 opening");
  const double cpu_ccl_ms = WallMs(a.repeats, [&] {
    std::vector<uint8_t> m2 = mask;
    imagery::FilterComponents(m2.data(), n_side, n_side, m.min_area_px);
  });
  report.Add("cpu_components_Gpxps", px / (cpu_ccl_ms * 1e6), "8-connected CCL + MMU 16 px");
  CoreResult cpu_result;
  const int pipeline_repeats = std::max(1, a.repeats / 2);
  const double cpu_pipeline_ms =
      WallMs(pipeline_repeats, [&] { cpu_result = RunCore(*cpu, in, c, /*count_regions=*/false); });
  report.Add("cpu_pipeline_ms_per_Mpx", cpu_pipeline_ms / mpx,
             "strips from host memory -> fused -> Otsu -> mask + MMU");

  // ---- GPU half ----
  const bool gpu = imagery::CudaDeviceCount() > 0;
  report.Add("gpu", gpu, gpu ? "CUDA device 0" : "no CUDA device: GPU half skipped");
  if (!gpu) {
    report.Add("gpu_skipped_reason", std::string(imagery::CudaCompiledIn() ? "no usable CUDA device"
                                                                           : "built without CUDA"));
  } else {
    const imagery::CudaKernelReport k = imagery::BenchmarkCudaKernels(
        0, imagery::HostPair{n_side, n_side, 4, in.before.data(), in.after.data()}, in.params, m,
        [](const std::vector<uint64_t>& h) { return imagery::OtsuThreshold(h); }, a.repeats);
    report.Add("device", k.device);
    report.Add("device_peak_GBps", k.peak_gbps, "memory clock x bus width (driver)");
    const KernelTiming* copy_d2d = Find(k.kernels, "copy_d2d");
    const KernelTiming* fused = Find(k.kernels, "fused");
    const KernelTiming* morph = Find(k.kernels, "threshold_morphology");
    const KernelTiming* ccl = Find(k.kernels, "components_mmu");
    const KernelTiming* resident = Find(k.kernels, "pipeline_resident");
    report.Add("gpu_copy_d2d_GBps", copy_d2d->Gbps(), "cudaMemcpy device to device, this run");
    report.Add("gpu_fused_GBps", fused->Gbps(), "fused pass + histogram, resident pair");
    const double of_copy = fused->Gbps() / copy_d2d->Gbps();
    report.Add("gpu_fused_of_copy", of_copy, "target >= 0.70");
    report.Add("gpu_fused_of_4.8TBps", fused->Gbps() / kH200Gbps, "of the H200's 4.8 TB/s");
    report.Add("gpu_fused_target_met", of_copy >= 0.70);
    report.Add("gpu_morphology_Gpxps", morph->Gpxps(), "threshold + 3x3 opening");
    report.Add("gpu_components_Gpxps", ccl->Gpxps(), "union-find CCL + MMU 16 px");
    report.Add("gpu_pipeline_resident_ms_per_Mpx", resident->ms / mpx,
               "fused -> Otsu -> mask + MMU -> scores + mask to host");
    report.Add("gpu_h2d_pinned_GBps", Find(k.kernels, "h2d_pinned")->Gbps(), "one image");
    report.Add("gpu_h2d_pageable_GBps", Find(k.kernels, "h2d_pageable")->Gbps(), "one image");
    imagery::ComputeBackendPtr cuda = imagery::MakeCudaBackend(0);
    CoreResult gpu_result;
    const double from_host_ms = WallMs(
        pipeline_repeats, [&] { gpu_result = RunCore(*cuda, in, c, /*count_regions=*/false); });
    report.Add("gpu_pipeline_from_host_ms_per_Mpx", from_host_ms / mpx,
               "the worker's path: pageable strips -> pinned -> 2 streams");
    report.Add("cpu_over_gpu_resident", cpu_pipeline_ms / resident->ms, "speed-up");
    report.Add("cpu_over_gpu_from_host", cpu_pipeline_ms / from_host_ms, "speed-up");
    const std::string diff = FirstDifference(cpu_result, gpu_result);
    report.Add("gpu_equals_cpu", diff.empty(), diff.empty() ? "scores, histogram, mask" : diff);
  }
  std::printf("%s", report.Markdown().c_str());
  if (!a.json.empty()) {
    std::ofstream(a.json) << report.Json();
  }
  if (!a.md.empty()) {
    std::ofstream(a.md) << report.Markdown();
  }
  return 0;
}

}  // namespace
}  // namespace warmpool::gpucheck

int main(int argc, char** argv) {
  warmpool::gpucheck::Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--size" && has_value) {
      a.size = std::atoi(argv[++i]);
    } else if (arg == "--repeats" && has_value) {
      a.repeats = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--threads" && has_value) {
      a.threads = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--json" && has_value) {
      a.json = argv[++i];
    } else if (arg == "--md" && has_value) {
      a.md = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: gpu_bench [--size N] [--repeats N] [--threads N] [--json F] [--md F]\n");
      return 2;
    }
  }
  if (a.size < 16) {
    std::fprintf(stderr, "gpu_bench: --size must be >= 16\n");
    return 2;
  }
  try {
    return warmpool::gpucheck::Run(a);
  } catch (const warmpool::imagery::ImageryError& e) {
    std::fprintf(stderr, "gpu_bench: %s\n", e.what());
    return 1;
  }
}
