#pragma once

// An open-loop client that calls a KEDA external scaler with KEDA's rhythm. In KEDA each
// ScaledObject has its own goroutine (pkg/scaling/scale_handler.go, startScaleLoop) that checks
// its scalers every pollingInterval; the HPA asks the metrics adapter for the metric every sync
// period (pkg/provider/provider.go, GetExternalMetric). Because every ScaledObject runs
// independently, a slow call delays only its own object: this client therefore schedules each
// object's calls at fixed times and issues them asynchronously, whatever the earlier calls are
// doing. Phases are spread uniformly over each period. Bench-only.

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "externalscaler.grpc.pb.h"

namespace warmpool::bench {

enum class Method { kGetMetricSpec = 0, kGetMetrics = 1, kIsActive = 2 };
inline constexpr int kMethodCount = 3;
const char* MethodName(Method m);

struct SoakObject {
  externalscaler::ScaledObjectRef ref;
  std::string metric_name;  // from GetMetricSpec, as KEDA puts it in the HPA
};

struct KedaRhythm {
  std::chrono::milliseconds poll{30000};  // ScaledObject pollingInterval (KEDA default 30 s)
  std::chrono::milliseconds hpa{15000};   // HPA sync period (kube-controller-manager default)
  // The calls one operator check / one HPA query makes, in order, on one goroutine.
  std::vector<Method> operator_chain{Method::kGetMetricSpec, Method::kIsActive};
  std::vector<Method> adapter_chain{Method::kGetMetrics};
  std::chrono::milliseconds call_deadline{5000};
  int max_in_flight = 4000;  // chains; beyond this a due chain is skipped and counted
  std::chrono::seconds window{60};
  std::chrono::seconds warmup{0};  // calls issued later also go to MethodStats::steady_ms
};

struct MethodStats {
  std::vector<std::vector<float>> window_ms;  // latencies of OK calls, per window
  std::vector<float> steady_ms;               // latencies of OK calls issued after the warm-up
  long calls = 0;
  long errors = 0;  // non-OK status
  long bad = 0;     // OK status but an answer KEDA could not use
  std::map<int, long> codes;
};

class KedaLikeClient {
 public:
  // `operator_channel` carries the operator's chains, `adapter_channel` the HPA's (the same
  // channel when both come from one process). `objects` must outlive Run().
  KedaLikeClient(std::shared_ptr<grpc::Channel> operator_channel,
                 std::shared_ptr<grpc::Channel> adapter_channel,
                 const std::vector<SoakObject>* objects, KedaRhythm rhythm);

  // Issues every chain due in [start, end), then waits for the calls still out (each is bounded
  // by call_deadline). Blocks; call once.
  void Run(std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end);

  const MethodStats& stats(Method m) const { return stats_[static_cast<int>(m)]; }
  long chains_started() const { return chains_started_; }
  long chains_skipped() const { return chains_skipped_; }
  double max_schedule_lag_ms() const { return max_lag_ms_; }  // how late a chain was issued
  const std::string& first_error() const { return first_error_; }

 private:
  struct Call;
  void Start(int object, bool from_operator, size_t step);
  void Complete(Call* call, bool ok);

  std::unique_ptr<externalscaler::ExternalScaler::Stub> operator_stub_, adapter_stub_;
  const std::vector<SoakObject>* objects_;
  const KedaRhythm rhythm_;
  grpc::CompletionQueue cq_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<int> in_flight_{0};
  std::mutex shutdown_mu_;
  bool shut_down_ = false;  // guarded by shutdown_mu_
  long chains_started_ = 0, chains_skipped_ = 0;
  double max_lag_ms_ = 0;
  MethodStats stats_[kMethodCount];  // written by the completion thread only
  std::string first_error_;          // completion thread only
};

}  // namespace warmpool::bench
