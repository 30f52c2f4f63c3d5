#pragma once

#include "externalscaler.grpc.pb.h"

namespace warmpool::probe {

// KEDA's polling path once: GetMetricSpec, then GetMetrics under the spec's metric name and
// IsActive (kedacore/keda pkg/scalers/external_scaler.go, GetMetricsAndActivity). Prints one
// JSON object with what KEDA and the HPA would see (or the failing rpc and its status); returns
// the exit code: 0, or 1 on an rpc error.
int ProbePoll(externalscaler::ExternalScaler::Stub& stub,
              const externalscaler::ScaledObjectRef& ref, double timeout_s);

}  // namespace warmpool::probe
