#include "worker/pod_cost_publisher.h"

#include <spdlog/spdlog.h>

#include "common/logging.h"

namespace warmpool::worker {

using Clock = std::chrono::steady_clock;

PodCostPublisher::PodCostPublisher(std::string pod, RunningSince running_since, Send send,
                                   PodCostTiming timing)
    : pod_(std::move(pod)),
      running_since_(std::move(running_since)),
      send_(std::move(send)),
      timing_(timing) {}

PodCostPublisher::~PodCostPublisher() { Stop(); }

void PodCostPublisher::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void PodCostPublisher::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_.store(true);
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PodCostPublisher::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_.load()) {
    lock.unlock();
    const auto now = Clock::now();
    const int cost = PodDeletionCost(running_since_(), now, timing_.min_running);
    // The first pass always writes: a previous container of this pod may have left a cost.
    if (cost != published_ && (!last_attempt_ || now - *last_attempt_ >= timing_.min_interval)) {
      last_attempt_ = now;
      Publish(cost);
    }
    lock.lock();
    cv_.wait_for(lock, timing_.poll, [this] { return stop_.load(); });
  }
}

void PodCostPublisher::Publish(int cost) {
  const ApiResult result = send_(PodDeletionCostPatch(cost), stop_);
  if (result.ok) {
    if (failures_ > 0) {
      LogEvent(spdlog::level::info, "pod_deletion_cost_recovered",
               {{"pod", pod_}, {"cost", cost}, {"failed_attempts", failures_}});
    } else {
      LogEvent(spdlog::level::debug, "pod_deletion_cost_published",
               {{"pod", pod_}, {"cost", cost}});
    }
    failures_ = 0;
    published_ = cost;
    return;
  }
  if (stop_.load()) return;  // cancelled by shutdown
  if (failures_++ == 0) {
    LogEvent(spdlog::level::warn, "pod_deletion_cost_failed",
             {{"pod", pod_},
              {"cost", cost},
              {"http_status", result.http_status},
              {"reason", result.reason},
              {"note", "retried while the value differs, logged again only after it recovers"}});
  }
}

std::unique_ptr<PodCostPublisher> StartPodCostPublisher(KubeApiConfig config,
                                                        PodCostPublisher::RunningSince running) {
  LogEvent(spdlog::level::info, "pod_deletion_cost_enabled",
           {{"api", config.base_url}, {"path", config.PodPath()}});
  const std::string pod = config.pod_namespace + "/" + config.pod_name;
  auto client = std::make_shared<KubeApiClient>(std::move(config));
  auto publisher = std::make_unique<PodCostPublisher>(
      pod, std::move(running), [client](const std::string& patch, const std::atomic<bool>& cancel) {
        return client->PatchPod(patch, cancel);
      });
  publisher->Start();
  return publisher;
}

}  // namespace warmpool::worker
