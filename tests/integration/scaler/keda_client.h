#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "externalscaler.grpc.pb.h"

namespace warmpool::testing {

// KEDA's external-scaler client, replayed call for call from kedacore/keda (files and lines
// cited at each step; external_scaler.go at 067b4c6, scalers_cache.go at 011208c), so the
// conformance test speaks to warmpool-scaler exactly as KEDA does. Test-only.
class KedaExternalTrigger {
 public:
  struct MetricSpec {
    std::string name;  // with KEDA's "sN-" prefix, as the HPA asks for it
    double target = 0;
  };
  struct MetricsAndActivity {
    grpc::Status status;
    double value = 0;
    bool active = false;
    int calls = 0;  // GetMetrics calls made: 2 after an error (KEDA's one retry)
  };

  // `trigger_metadata` as written in the ScaledObject's trigger (including scalerAddress,
  // enableTLS, unsafeSsl), `env` the scale target's resolved environment, `trigger_index` the
  // trigger's position in the ScaledObject.
  KedaExternalTrigger(std::string name, std::string ns,
                      const std::map<std::string, std::string>& trigger_metadata,
                      const std::map<std::string, std::string>& env, int trigger_index = 0);

  // What warmpool receives as scalerMetadata.
  const externalscaler::ScaledObjectRef& ref() const { return ref_; }

  // ScalersCache.GetMetricSpecForScalingForScaler: GetMetricSpec, once more when it returned
  // nothing. Empty on error; *status (if given) is the last call's.
  std::vector<MetricSpec> GetMetricSpecForScaling(grpc::Status* status = nullptr);

  // ScalersCache.GetMetricsAndActivityForScaler for the HPA's metric name (with "sN-").
  MetricsAndActivity GetMetricsAndActivity(const std::string& metric_name);

  // externalPushScaler.Run's StreamMetricSpec watcher, once (streamMetricSpecOnce): the status
  // the stream ended with and how many specs it delivered first. UNIMPLEMENTED is KEDA's
  // "stop watching, keep calling GetMetricSpec".
  struct MetricSpecStream {
    grpc::Status status;
    int updates = 0;
  };
  MetricSpecStream StreamMetricSpecOnce(std::chrono::milliseconds timeout);

  // externalPushScaler.Run's StreamIsActive loop on its own thread until StopStream.
  void StartStream();
  void StopStream();

  struct StreamEvent {
    enum Kind { kMessage, kEnded, kRetryWait } kind;
    std::chrono::steady_clock::time_point at;
    bool active = false;               // kMessage
    grpc::Status status;               // kEnded: how the stream ended
    int messages = 0;                  // kEnded: how many it delivered (0: it never opened)
    std::chrono::milliseconds wait{};  // kRetryWait: the wait KEDA sleeps before reconnecting
  };
  std::vector<StreamEvent> StreamEvents();
  // Waits until `count` events of `kind` were seen; false on timeout.
  bool WaitForEvents(StreamEvent::Kind kind, size_t count, std::chrono::milliseconds timeout);

 private:
  MetricsAndActivity GetMetricsAndActivityOnce(const std::string& metric_name);
  grpc::Status RunStreamOnce();
  void RunStream();
  void Record(StreamEvent event);

  const int trigger_index_;
  externalscaler::ScaledObjectRef ref_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<externalscaler::ExternalScaler::Stub> stub_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<StreamEvent> events_;      // guarded by mu_
  bool stop_ = false;                    // guarded by mu_
  grpc::ClientContext* open_ = nullptr;  // guarded by mu_: the open stream's context
  std::thread stream_thread_;
};

}  // namespace warmpool::testing
