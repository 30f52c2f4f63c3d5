#pragma once

// The device half of the pipeline: fused pass + histogram, then threshold, morphology and the
// minimum mapping unit. One implementation per device (CPU here, CUDA in gpu_backend.cu); the
// host orchestration in change_core.cpp is shared.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "imagery/change_math.h"
#include "imagery/components.h"

namespace warmpool::imagery {

struct MaskParams {
  uint32_t threshold_bin = 0;  // change when bin > threshold_bin
  int open_radius = 1;         // 0 = no opening
  int close_radius = 0;        // 0 = no closing
  int64_t min_area_px = 0;     // minimum mapping unit; 0 or 1 keeps everything
};

// Not thread-safe: one image at a time per backend object.
class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;

  // "cpu" or "cuda:N (<device name>)".
  virtual std::string Name() const = 0;

  // Starts an image. `scores` (host, width*height) holds the packed scores once Histogram()
  // returns; it must stay alive until then.
  virtual void Begin(const FusedParams& params, int width, int height, uint16_t* scores) = 0;

  // Fused normalise + difference + histogram of rows [row0, row0 + rows). `before`/`after` are
  // planar host strips (plane = rows * width). The call may return before the work is done, but
  // the strip buffers may be reused as soon as it returns.
  virtual void FusedStrip(int row0, int rows, const uint16_t* before, const uint16_t* after) = 0;

  // Waits for every strip; fills histogram[kScoreBins] and the host scores.
  virtual void Histogram(uint64_t* histogram) = 0;

  // After Histogram(): replaces every magnitude by its box mean of params.smooth_radius
  // (smoothing_math.h), then refills histogram[kScoreBins] and the host scores.
  virtual void Smooth(uint64_t* histogram) = 0;

  // Threshold, opening/closing, nodata clear and MMU over the whole image. `mask` (host,
  // width*height) receives 0/1. Returns the kept regions when the backend computed them anyway.
  virtual std::optional<std::vector<Region>> MaskAndFilter(const MaskParams& params,
                                                           uint8_t* mask) = 0;
};

using ComputeBackendPtr = std::unique_ptr<ComputeBackend>;

// The CPU backend, using `threads` threads (>= 1).
ComputeBackendPtr MakeCpuBackend(int threads);

}  // namespace warmpool::imagery
