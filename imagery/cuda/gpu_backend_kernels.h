#pragma once

// The CUDA launchers behind the GPU backend and its benchmark, on device pointers (included by
// .cu files only). Kernels live in gpu_backend_kernels.cu; the backend (streams, staging) in
// gpu_backend.cu; the timing in gpu_backend_benchmark.cu.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <cuda_runtime.h>

#include "imagery/change_math.h"
#include "imagery/compute_backend.h"
#include "imagery/imagery_error.h"

namespace warmpool::imagery::cuda {

// Throws ImageryError(kDevice) naming `what` unless `err` is cudaSuccess.
inline void CheckCuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw ImageryError(ImageryError::Kind::kDevice,
                       std::string("CUDA error in ") + what + ": " + cudaGetErrorString(err));
  }
}

struct CudaFreeDeleter {
  void operator()(void* p) const { cudaFree(p); }
};
struct PinnedFreeDeleter {
  void operator()(void* p) const { cudaFreeHost(p); }
};

// A grow-only buffer (device or pinned host).
template <typename Deleter, bool kPinned>
class GrowBuffer {
 public:
  void* Ensure(size_t bytes) {
    if (bytes > bytes_) {
      ptr_.reset();
      void* p = nullptr;
      CheckCuda(kPinned ? cudaMallocHost(&p, bytes) : cudaMalloc(&p, bytes),
                kPinned ? "cudaMallocHost" : "cudaMalloc");
      ptr_.reset(p);
      bytes_ = bytes;
    }
    return ptr_.get();
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_.get());
  }

 private:
  std::unique_ptr<void, Deleter> ptr_;
  size_t bytes_ = 0;
};
using DeviceBuffer = GrowBuffer<CudaFreeDeleter, false>;
using PinnedBuffer = GrowBuffer<PinnedFreeDeleter, true>;

// Scratch of the mask stage (grown on demand, reused).
struct MaskBuffers {
  DeviceBuffer mask_a, mask_b, labels, area;
};

// Fused normalise + measure + quantise of `plane` pixels into scores, adding the counted bins
// (global index global_offset + i) to the device histogram[kScoreBins].
void LaunchFused(const FusedParams& p, const uint16_t* before, const uint16_t* after, size_t plane,
                 size_t global_offset, uint16_t* scores, uint32_t* histogram, int sm_count,
                 cudaStream_t stream);

// Threshold, opening/closing and nodata clear of the device scores (width x height) into a
// device mask; returns it (one of `buffers`' masks). Asynchronous on `stream`.
uint8_t* LaunchThresholdMorphology(MaskBuffers& buffers, const uint16_t* scores,
                                   const MaskParams& m, int width, int height, int sm_count,
                                   cudaStream_t stream);

// Union-find 8-connected components of the device `mask` and the minimum mapping unit
// (m.min_area_px > 1), in place. Asynchronous on `stream`.
void LaunchComponentsFilter(MaskBuffers& buffers, uint8_t* mask, int64_t min_area_px, int width,
                            int height, int sm_count, cudaStream_t stream);

// Both stages; returns the device mask.
uint8_t* LaunchMask(MaskBuffers& buffers, const uint16_t* scores, const MaskParams& m, int width,
                    int height, int sm_count, cudaStream_t stream);

}  // namespace warmpool::imagery::cuda
