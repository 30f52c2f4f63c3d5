#pragma once

#include "scaler/scaler_options.h"

namespace warmpool::scaler {

// Runs warmpool-scaler until SIGTERM/SIGINT: gRPC (ExternalScaler, health with service
// "readiness" = every named Redis answers PING, reflection), Prometheus /metrics, logs.
// Returns the process exit code (0 on a clean shutdown, 1 when it cannot start).
int RunScalerServer(const ScalerOptions& options);

}  // namespace warmpool::scaler
