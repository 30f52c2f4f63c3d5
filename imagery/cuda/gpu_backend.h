#pragma once

// CUDA entry points. Built from gpu_backend.cu when CUDA is available, else from
// gpu_backend_stub.cpp (no GPU: 0 devices, MakeCudaBackend throws).

#include <string>

#include "imagery/compute_backend.h"

namespace warmpool::imagery {

// Number of usable CUDA devices; 0 without CUDA, driver or GPU. Never throws.
int CudaDeviceCount();

// True when this build contains the CUDA kernels.
bool CudaCompiledIn();

// A backend on CUDA device `ordinal`. Device buffers, pinned staging buffers and the two streams
// are cached per device and reused by later backends (grow-only); one backend per device may be
// alive at a time (a second waits). Throws ImageryError(kDevice) when the device is unusable.
ComputeBackendPtr MakeCudaBackend(int ordinal);

}  // namespace warmpool::imagery
