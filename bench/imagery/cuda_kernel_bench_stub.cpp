// Built instead of cuda_kernel_bench.cu when CUDA is not available at configure time.
#include "bench/imagery/cuda_kernel_bench.h"
#include "imagery/imagery_error.h"

namespace warmpool::imagery::bench {

CudaKernelReport BenchmarkCudaKernels(int ordinal, const HostPair&, const FusedParams&,
                                      const MaskParams&, const ThresholdChooser&, int) {
  throw ImageryError(ImageryError::Kind::kDevice,
                     "cuda:" + std::to_string(ordinal) + " benchmark needs a CUDA build");
}

}  // namespace warmpool::imagery::bench
