#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "worker/kube_api_client.h"
#include "worker/pod_deletion_cost.h"

namespace warmpool::worker {

struct PodCostTiming {
  std::chrono::steady_clock::duration min_running = kPodCostMinRunning;
  // At most one write per this long: KEP-2255 warns that frequent annotation updates load the
  // API server. Changes in between coalesce into the latest value.
  std::chrono::steady_clock::duration min_interval = std::chrono::seconds(10);
  std::chrono::steady_clock::duration poll = std::chrono::seconds(1);  // cost recomputed
};

// --pod-deletion-cost: keeps the worker's own pod annotated with how busy it is, from a thread of
// its own, so that a ReplicaSet scaling in deletes idle workers first. Writes only when the value
// differs from the last one the API server accepted, and never more often than min_interval;
// task threads are never waited on (it reads their start times under WorkerState::mu). A failed
// write is logged once per streak of failures (and the recovery once) and retried.
class PodCostPublisher {
 public:
  using RunningSince = std::function<std::vector<std::chrono::steady_clock::time_point>()>;
  using Send = std::function<ApiResult(const std::string& merge_patch, const std::atomic<bool>&)>;

  // `pod` ("<ns>/<name>") is for the logs.
  PodCostPublisher(std::string pod, RunningSince running_since, Send send,
                   PodCostTiming timing = {});
  ~PodCostPublisher();  // Stop()
  PodCostPublisher(const PodCostPublisher&) = delete;
  PodCostPublisher& operator=(const PodCostPublisher&) = delete;

  void Start();
  // Stops the thread, aborting a request in flight (within about a second). Idempotent.
  void Stop();

 private:
  void Loop();
  void Publish(int cost);

  const std::string pod_;
  const RunningSince running_since_;
  const Send send_;
  const PodCostTiming timing_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};  // also cancels the request in flight
  // The publishing thread's own state.
  std::optional<int> published_;  // the last value the API server accepted
  std::optional<std::chrono::steady_clock::time_point> last_attempt_;
  long failures_ = 0;  // in the current streak
  std::thread thread_;
};

// A started publisher that PATCHes the pod `config` names (KubeApiClient).
std::unique_ptr<PodCostPublisher> StartPodCostPublisher(KubeApiConfig config,
                                                        PodCostPublisher::RunningSince running);

}  // namespace warmpool::worker
