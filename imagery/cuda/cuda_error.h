#pragma once

// CUDA status codes as ImageryError(kDevice), for the backend, the kernels' launchers and the
// kernel benchmark (included by .cu files only).

#include <string>

#include <cuda_runtime.h>

#include "imagery/imagery_error.h"

namespace warmpool::imagery::cuda {

// Throws ImageryError(kDevice) naming `what` unless `err` is cudaSuccess.
inline void CheckCuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw ImageryError(ImageryError::Kind::kDevice,
                       std::string("CUDA error in ") + what + ": " + cudaGetErrorString(err));
  }
}

}  // namespace warmpool::imagery::cuda
