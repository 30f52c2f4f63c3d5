// warmpool-scaler: KEDA external scaler for Celery on Redis. Thin shell over warmpool_scaler.
#include <absl/synchronization/mutex.h>
#include <csignal>
#include <malloc.h>

#include "scaler/scaler_options.h"
#include "scaler/scaler_server.h"

int main(int argc, char** argv) {
  // Debian's Abseil is built with deadlock detection on: every absl::Mutex that gRPC creates and
  // destroys per call then updates a global lock graph (5-6 % of the scaler's CPU at peak load).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // gRPC allocates and frees per call from several threads; keep freed memory in the arenas
  // instead of trimming and regrowing them on every burst.
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
  warmpool::scaler::ScalerOptions options;
  int exit_code = 0;
  if (!warmpool::scaler::ParseScalerOptions(argc, argv, &options, &exit_code)) return exit_code;
  return warmpool::scaler::RunScalerServer(options);
}
