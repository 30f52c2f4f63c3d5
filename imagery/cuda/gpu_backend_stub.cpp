// Built instead of the .cu files when CUDA is not available at configure time.
#include "imagery/cuda/gpu_backend.h"
#include "imagery/imagery_error.h"

namespace warmpool::imagery {

int CudaDeviceCount() { return 0; }

bool CudaCompiledIn() { return false; }

ComputeBackendPtr MakeCudaBackend(int ordinal) {
  throw ImageryError(
      ImageryError::Kind::kDevice,
      "device cuda:" + std::to_string(ordinal) + " requested but this build has no CUDA support");
}

}  // namespace warmpool::imagery
