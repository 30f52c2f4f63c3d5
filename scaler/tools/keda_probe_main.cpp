// warmpool-keda-probe: calls a running external scaler exactly as KEDA does and prints what KEDA
// and the HPA would see, as JSON. For the demo, smoke checks and users without grpcurl (not
// packaged for Debian 12). Modes:
//   (default)        GetMetricSpec, then GetMetrics + IsActive: one JSON object
//   --health [svc]   grpc.health.v1 Check: exit 0 SERVING, 1 otherwise
//   --stream         StreamIsActive: one JSON line per message with its latency, until the
//                    server ends it, Ctrl-C or --stream-seconds
// Exit codes: 0 success, 1 an rpc error (or not SERVING), 2 a usage error.
#include <iostream>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "externalscaler.grpc.pb.h"
#include "policy/scaler_metadata.h"
#include "scaler/tools/probe_channel.h"
#include "scaler/tools/probe_health.h"
#include "scaler/tools/probe_poll.h"
#include "scaler/tools/probe_stream.h"

int main(int argc, char** argv) {
  namespace probe = warmpool::probe;
  CLI::App app{"Calls a KEDA external scaler as KEDA does and prints what KEDA would see."};
  std::string address = "127.0.0.1:6000", name = "demo", ns = "default", health_service;
  std::vector<std::string> meta;
  double timeout_s = 5, stream_seconds = 0;
  bool stream = false;
  app.add_option("--scaler", address, "scalerAddress HOST:PORT")->capture_default_str();
  app.add_option("--name", name, "ScaledObject name")->capture_default_str();
  app.add_option("--namespace", ns, "ScaledObject namespace")->capture_default_str();
  app.add_option("--meta", meta,
                 "trigger metadata key=value as KEDA sends it (repeatable; for xFromEnv give "
                 "the variable's value)");
  app.add_option("--timeout", timeout_s, "per-rpc deadline, seconds")
      ->capture_default_str()
      ->check(warmpool::FiniteRange(0.001, 86400));
  auto* health = app.add_option("--health", health_service,
                                "grpc.health.v1 Check of SERVICE (default: the whole server; "
                                "the scaler also serves readiness, liveness); exit 0 SERVING")
                     ->expected(0, 1);
  auto* stream_flag =
      app.add_flag("--stream", stream, "watch StreamIsActive, one JSON line per message");
  app.add_option("--stream-seconds", stream_seconds, "stop --stream after N seconds (0 = never)")
      ->needs(stream_flag)
      ->check(warmpool::FiniteRange(0, 366.0 * 86400));
  health->excludes(stream_flag);
  probe::ProbeTls tls;
  app.add_option("--tls-ca", tls.ca, "TLS: PEM CA bundle the scaler's certificate must chain to");
  app.add_option("--tls-cert", tls.cert, "TLS: client certificate (PEM) for mTLS");
  app.add_option("--tls-key", tls.key, "TLS: client private key (PEM) of --tls-cert");
  app.add_option("--tls-server-name", tls.server_name,
                 "TLS: name the scaler's certificate must hold (default: --scaler's host)");
  warmpool::AddVersionFlag(app, "warmpool-keda-probe");
  WARMPOOL_CLI_PARSE(app, argc, argv);

  externalscaler::ScaledObjectRef ref;
  ref.set_name(name);
  ref.set_namespace_(ns);
  std::map<std::string, std::string> metadata;
  for (const auto& kv : meta) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) {
      std::cerr << "warmpool-keda-probe: --meta expects key=value, got '" << kv << "'\n";
      return 2;
    }
    metadata[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  ref.mutable_scalermetadata()->insert(metadata.begin(), metadata.end());
  if (!health->count()) {
    // The scaler's own parser: say what it will refuse, then show its answer as KEDA gets it.
    warmpool::policy::ParsedMetadata parsed;
    warmpool::Status s = warmpool::policy::ParseScalerMetadata(metadata, &parsed);
    if (!s.ok())
      std::cerr << "warmpool-keda-probe: the scaler will refuse: " << s.message() << "\n";
  }

  probe::BlockStopSignals();  // before gRPC starts its threads
  std::string channel_error;
  auto channel = probe::MakeProbeChannel(address, tls, &channel_error);
  if (!channel) {
    std::cerr << "warmpool-keda-probe: " << channel_error << "\n";
    return 2;
  }
  if (health->count()) return probe::ProbeHealth(channel, health_service, timeout_s);
  auto stub = externalscaler::ExternalScaler::NewStub(channel);
  if (stream) return probe::ProbeStream(*stub, ref, stream_seconds);
  return probe::ProbePoll(*stub, ref, timeout_s);
}
