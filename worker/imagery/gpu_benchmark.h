#pragma once

// Kernel micro-benchmarks for scripts/gpu-check.sh (CUDA builds; the stub throws).

#include <nlohmann/json.hpp>

namespace warmpool::imagery {

// Times the device kernels on width x height synthetic 4-band uint16 data resident on device
// `ordinal`: a device-to-device copy probe, the fused CVA pass with histogram, threshold + 3x3
// opening, threshold + CCL + MMU, and pinned/pageable host-to-device copies. Returns
// {device, peak_gbps, kernels: [{kernel, bytes, ms, gbps, gpx_per_s, pct_peak}]}.
// Throws ImageryError(kDevice).
nlohmann::json BenchmarkCudaKernels(int ordinal, int width, int height, int repeats);

}  // namespace warmpool::imagery
