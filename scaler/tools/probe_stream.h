#pragma once

#include "externalscaler.grpc.pb.h"

namespace warmpool::probe {

// Opens StreamIsActive as KEDA's push path does and prints one JSON line per message:
// {"isActive", "sinceOpenMs" (since the stream opened), "sincePreviousMs" (since the previous
// message; null for the first)}, then one line {"end": ...} saying how it ended. Runs until the
// server ends the stream, Ctrl-C / SIGTERM, or `seconds` (> 0) pass. Returns the exit code: 0
// when it ended cleanly (server EOF, Ctrl-C or the time limit), 1 on an rpc error. The caller
// blocks SIGINT and SIGTERM in every thread before creating the channel (BlockStopSignals).
int ProbeStream(externalscaler::ExternalScaler::Stub& stub,
                const externalscaler::ScaledObjectRef& ref, double seconds);

// Blocks SIGINT and SIGTERM in this thread and the threads it starts later (gRPC's), so that
// ProbeStream can wait for them.
void BlockStopSignals();

}  // namespace warmpool::probe
