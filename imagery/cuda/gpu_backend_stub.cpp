// Built instead of the gpu_backend*.cu files when CUDA is not available at configure time.
#include "imagery/cuda/gpu_backend.h"
#include "imagery/cuda/gpu_benchmark.h"
#include "imagery/imagery_error.h"

namespace warmpool::imagery {

int CudaDeviceCount() { return 0; }

bool CudaCompiledIn() { return false; }

ComputeBackendPtr MakeCudaBackend(int ordinal) {
  throw ImageryError(
      ImageryError::Kind::kDevice,
      "device cuda:" + std::to_string(ordinal) + " requested but this build has no CUDA support");
}

CudaKernelReport BenchmarkCudaKernels(int ordinal, const HostPair&, const FusedParams&,
                                      const MaskParams&, const ThresholdChooser&, int) {
  throw ImageryError(ImageryError::Kind::kDevice,
                     "cuda:" + std::to_string(ordinal) + " benchmark needs a CUDA build");
}

}  // namespace warmpool::imagery
