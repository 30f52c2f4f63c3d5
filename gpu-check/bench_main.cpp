// gpu_bench: the change-detection core on one size x size 4-band uint16 pair (default 10980, a
// Sentinel-2 tile at 10 m): CPU half always (host copy reference, fused pass, morphology,
// components, whole CPU pipeline), GPU half when a CUDA device is usable (kernels on the
// device-resident pair against the same run's device-to-device copy and 4.8 TB/s, the resident
// pipeline, the backend from host memory, and whether its outputs equal the CPU's bit for bit).
// Both halves also run IR-MAD (projections fitted on the host) and CVA with a 3x3 mean of the
// magnitude: fused-pass throughput and pipeline ms/Mpx, and GPU == CPU for each.
// Usage: gpu_bench [--size N] [--repeats N] [--threads N] [--json FILE] [--md FILE]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/imagery/cuda_kernel_bench.h"
#include "bench/imagery/wall_ms.h"
#include "gpu-check/core_run.h"
#include "gpu-check/report.h"
#include "imagery/components.h"
#include "imagery/cuda/gpu_backend.h"
#include "imagery/imagery_error.h"
#include "imagery/morphology.h"
#include "imagery/parallel_slices.h"
#include "imagery/threshold.h"

namespace warmpool::gpucheck {
namespace {

using imagery::bench::KernelTiming;
using imagery::bench::WallMs;

constexpr double kH200Gbps = 4800.0;  // H200 HBM3e peak (NVIDIA H200 datasheet)

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

// The benchmark's case on its pair, shared by both halves.
struct BenchInput {
  int side = 0;
  size_t n = 0;    // pixels
  double mpx = 0;  // megapixels
  CoreCase c;      // cva, 4 bands, PIF gain/offset, Otsu, open 1, MMU 16
  Prepared in;
  CoreCase irmad_c;  // c with method irmad (host fit) and Kittler-Illingworth
  Prepared irmad_in;
  CoreCase smooth_c;  // c with smooth_radius 1 (same inputs as c)
  int pipeline_repeats = 1;
};

// What the GPU half compares itself with.
struct CpuFigures {
  imagery::MaskParams mask;  // with the Otsu threshold of the CPU fused pass
  double pipeline_ms = 0;
  CoreResult result;
  double irmad_pipeline_ms = 0, smooth_pipeline_ms = 0;
  CoreResult irmad_result, smooth_result;
};

BenchInput MakeInput(const Args& a, Report& report) {
  BenchInput b;
  b.side = a.size;
  b.n = static_cast<size_t>(a.size) * a.size;
  b.mpx = static_cast<double>(b.n) / 1e6;
  b.pipeline_repeats = std::max(1, a.repeats / 2);
  PairOptions po;
  po.width = po.height = a.size;
  po.band_count = 4;
  po.kind = PairKind::kGainOffset;
  po.nodata_border_px = 0;
  po.threads = a.threads;
  b.c.strip_rows = 512;
  b.c.histogram_stride = imagery::HistogramStride(b.n);
  const auto t0 = std::chrono::steady_clock::now();
  const CorePair pair = MakePair(po);
  b.in = Prepare(pair, b.c);
  report.Add("generate_s",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
             "synthetic pair + PIF fit");
  b.irmad_c = b.c;
  b.irmad_c.method = imagery::Method::kIrMad;
  b.irmad_c.norm = Norm::kIrMad;
  b.irmad_c.threshold = Threshold::kKittlerIllingworth;
  b.irmad_in = Prepare(pair, b.irmad_c);
  b.smooth_c = b.c;
  b.smooth_c.smooth_radius = 1;
  return b;
}

// Host copy reference, fused pass, morphology, components, whole CPU pipeline.
CpuFigures RunCpuHalf(const Args& a, const BenchInput& b, Report& report) {
  const size_t n = b.n;
  const double px = static_cast<double>(n);
  const size_t image_bytes = n * 4 * sizeof(uint16_t);
  const double fused_bytes = 2.0 * image_bytes + 2.0 * n;
  std::vector<uint16_t> copy(n * 4);
  const double cpu_copy_ms = WallMs(a.repeats, [&] {
    imagery::ParallelSlices(a.threads, n * 4, [&](int, size_t begin, size_t end) {
      std::memcpy(copy.data() + begin, b.in.before.data() + begin,
                  (end - begin) * sizeof(uint16_t));
    });
  });
  const double cpu_copy_gbps = 2.0 * image_bytes / (cpu_copy_ms * 1e6);
  report.Add("cpu_copy_GBps", cpu_copy_gbps, "host memcpy of one image, read + write");
  copy = {};
  imagery::ComputeBackendPtr cpu = imagery::MakeCpuBackend(a.threads);
  std::vector<uint16_t> scores(n);
  std::vector<uint64_t> histogram(imagery::kScoreBins);
  const double cpu_fused_ms = WallMs(a.repeats, [&] {
    cpu->Begin(b.in.params, b.side, b.side, scores.data());
    cpu->FusedStrip(0, b.side, b.in.before.data(), b.in.after.data());
    cpu->Histogram(histogram.data());
  });
  const double cpu_fused_gbps = fused_bytes / (cpu_fused_ms * 1e6);
  report.Add("cpu_fused_GBps", cpu_fused_gbps, "fused pass + histogram");
  report.Add("cpu_fused_of_copy", cpu_fused_gbps / cpu_copy_gbps, "of the host copy");
  CpuFigures cpu_figures;
  imagery::MaskParams& m = cpu_figures.mask;
  m.threshold_bin = imagery::OtsuThreshold(histogram);
  m.open_radius = b.c.open_radius;
  m.close_radius = b.c.close_radius;
  m.min_area_px = b.c.min_area_px;
  std::vector<uint8_t> mask(n), work;
  const double cpu_morph_ms = WallMs(a.repeats, [&] {
    imagery::ThresholdScores(scores.data(), n, m.threshold_bin, mask.data());
    imagery::OpenClose(mask.data(), b.side, b.side, m.open_radius, m.close_radius, a.threads, work);
    imagery::ClearNodata(scores.data(), n, mask.data());
  });
  report.Add("cpu_morphology_Gpxps", px / (cpu_morph_ms * 1e6), "threshold + 3x3 opening");
  const double cpu_ccl_ms = WallMs(a.repeats, [&] {
    std::vector<uint8_t> m2 = mask;
    imagery::FilterComponents(m2.data(), b.side, b.side, m.min_area_px);
  });
  report.Add("cpu_components_Gpxps", px / (cpu_ccl_ms * 1e6), "8-connected CCL + MMU 16 px");
  cpu_figures.pipeline_ms = WallMs(b.pipeline_repeats, [&] {
    cpu_figures.result = RunCore(*cpu, b.in, b.c, /*count_regions=*/false);
  });
  report.Add("cpu_pipeline_ms_per_Mpx", cpu_figures.pipeline_ms / b.mpx,
             "strips from host memory -> fused -> Otsu -> mask + MMU");
  const double cpu_irmad_ms = WallMs(a.repeats, [&] {
    cpu->Begin(b.irmad_in.params, b.side, b.side, scores.data());
    cpu->FusedStrip(0, b.side, b.irmad_in.before.data(), b.irmad_in.after.data());
    cpu->Histogram(histogram.data());
  });
  report.Add("cpu_fused_irmad_GBps", fused_bytes / (cpu_irmad_ms * 1e6), "IR-MAD fused pass");
  report.Add("cpu_fused_irmad_over_cva", cpu_irmad_ms / cpu_fused_ms, "time, same run");
  cpu_figures.irmad_pipeline_ms = WallMs(b.pipeline_repeats, [&] {
    cpu_figures.irmad_result = RunCore(*cpu, b.irmad_in, b.irmad_c, /*count_regions=*/false);
  });
  report.Add("cpu_pipeline_irmad_ms_per_Mpx", cpu_figures.irmad_pipeline_ms / b.mpx,
             "IR-MAD (fit excluded) -> KI -> mask + MMU");
  cpu_figures.smooth_pipeline_ms = WallMs(b.pipeline_repeats, [&] {
    cpu_figures.smooth_result = RunCore(*cpu, b.in, b.smooth_c, /*count_regions=*/false);
  });
  report.Add("cpu_pipeline_smooth1_ms_per_Mpx", cpu_figures.smooth_pipeline_ms / b.mpx,
             "the CVA pipeline with a 3x3 mean of the magnitude");
  return cpu_figures;
}

// IR-MAD's fused kernel on the resident pair, then IR-MAD and the smoothed CVA pipeline from host
// memory, each against the CPU's bytes.
void RunGpuVariants(const Args& a, const BenchInput& b, const CpuFigures& cpu,
                    imagery::ComputeBackend& cuda, Report& report) {
  const imagery::bench::CudaKernelReport k = imagery::bench::BenchmarkCudaKernels(
      0,
      imagery::bench::HostPair{b.side, b.side, 4, b.irmad_in.before.data(),
                               b.irmad_in.after.data()},
      b.irmad_in.params, cpu.mask,
      [](const std::vector<uint64_t>& h) { return imagery::KittlerIllingworthThreshold(h); },
      a.repeats);
  const KernelTiming* copy_d2d = Find(k.kernels, "copy_d2d");
  const KernelTiming* fused = Find(k.kernels, "fused");
  report.Add("gpu_fused_irmad_GBps", fused->Gbps(), "IR-MAD fused pass, resident pair");
  report.Add("gpu_fused_irmad_of_copy", fused->Gbps() / copy_d2d->Gbps(), "same run's D2D copy");
  const auto compare = [&](const char* name, const Prepared& in, const CoreCase& c, double cpu_ms,
                           const CoreResult& expect) {
    CoreResult got;
    const double ms =
        WallMs(b.pipeline_repeats, [&] { got = RunCore(cuda, in, c, /*count_regions=*/false); });
    report.Add(std::string("gpu_pipeline_") + name + "_from_host_ms_per_Mpx", ms / b.mpx,
               "pageable strips -> pinned -> 2 streams");
    report.Add(std::string("cpu_over_gpu_") + name, cpu_ms / ms, "speed-up, from host");
    const std::string diff = FirstDifference(expect, got);
    report.Add(std::string("gpu_") + name + "_equals_cpu", diff.empty(),
               diff.empty() ? "scores, histogram, mask" : diff);
  };
  compare("irmad", b.irmad_in, b.irmad_c, cpu.irmad_pipeline_ms, cpu.irmad_result);
  compare("smooth1", b.in, b.smooth_c, cpu.smooth_pipeline_ms, cpu.smooth_result);
}

// Kernels on the device-resident pair, the resident pipeline, the backend from host memory, and
// whether its outputs equal the CPU's bit for bit.
void RunGpuHalf(const Args& a, const BenchInput& b, const CpuFigures& cpu, Report& report) {
  const imagery::bench::CudaKernelReport k = imagery::bench::BenchmarkCudaKernels(
      0, imagery::bench::HostPair{b.side, b.side, 4, b.in.before.data(), b.in.after.data()},
      b.in.params, cpu.mask,
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
  report.Add("gpu_pipeline_resident_ms_per_Mpx", resident->ms / b.mpx,
             "fused -> Otsu -> mask + MMU -> scores + mask to host");
  report.Add("gpu_h2d_pinned_GBps", Find(k.kernels, "h2d_pinned")->Gbps(), "one image");
  report.Add("gpu_h2d_pageable_GBps", Find(k.kernels, "h2d_pageable")->Gbps(), "one image");
  imagery::ComputeBackendPtr cuda = imagery::MakeCudaBackend(0);
  CoreResult gpu_result;
  const double from_host_ms = WallMs(
      b.pipeline_repeats, [&] { gpu_result = RunCore(*cuda, b.in, b.c, /*count_regions=*/false); });
  report.Add("gpu_pipeline_from_host_ms_per_Mpx", from_host_ms / b.mpx,
             "the worker's path: pageable strips -> pinned -> 2 streams");
  report.Add("cpu_over_gpu_resident", cpu.pipeline_ms / resident->ms, "speed-up");
  report.Add("cpu_over_gpu_from_host", cpu.pipeline_ms / from_host_ms, "speed-up");
  const std::string diff = FirstDifference(cpu.result, gpu_result);
  report.Add("gpu_equals_cpu", diff.empty(), diff.empty() ? "scores, histogram, mask" : diff);
  RunGpuVariants(a, b, cpu, *cuda, report);
}

int Run(const Args& a) {
  Report report;
  report.Add("size", static_cast<double>(a.size), "pair side (px), 4 bands uint16");
  report.Add("cpu_threads", static_cast<double>(a.threads), "CPU backend threads");
  const BenchInput b = MakeInput(a, report);
  const CpuFigures cpu = RunCpuHalf(a, b, report);
  const bool gpu = imagery::CudaDeviceCount() > 0;
  report.Add("gpu", gpu, gpu ? "CUDA device 0" : "no CUDA device: GPU half skipped");
  if (!gpu) {
    report.Add("gpu_skipped_reason", std::string(imagery::CudaCompiledIn() ? "no usable CUDA device"
                                                                           : "built without CUDA"));
  } else {
    RunGpuHalf(a, b, cpu, report);
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
