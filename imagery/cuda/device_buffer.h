#pragma once

// Grow-only CUDA allocations: device memory and pinned (page-locked) host memory. The backend
// keeps them per device and reuses them across tasks (included by .cu files only).

#include <cstddef>
#include <memory>

#include <cuda_runtime.h>

#include "imagery/cuda/cuda_error.h"

namespace warmpool::imagery::cuda {

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

}  // namespace warmpool::imagery::cuda
