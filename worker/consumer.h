#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "worker/broker_api.h"
#include "worker/events.h"
#include "worker/finish_plan.h"
#include "worker/job.h"
#include "worker/result_store.h"
#include "worker/task_registry.h"
#include "worker/worker_metrics.h"
#include "worker/worker_options.h"
#include "worker/worker_state.h"

namespace warmpool::worker {

// The consumer: takes messages (with their bookkeeping, in one Lua script) up to the prefetch
// limit, in kombu's round-robin queue order; turns each into a job (decoded, dead-lettered,
// refused when not registered, revoked or expired); holds ETA jobs until due; sends heartbeats,
// refreshes the scores of what it holds and sweeps stale ones; recovers its in-flight set after
// a Redis error. Its state is guarded by fetch_mutex(): held by the consumer loop while it
// works, and by an executor taking the next messages itself. Never held while waiting.
class Consumer {
 public:
  Consumer(const WorkerOptions& options, const TaskRegistry& registry, BrokerApi& broker,
           ResultStoreApi& results, EventDispatcher& events, WorkerMetrics& metrics,
           WorkerState& state);

  // Declares the queues and restores what a previous incarnation left, retrying Redis errors
  // with backoff. False when shutdown came first.
  bool ConnectAndRecover();
  // The consumer loop, until shutdown. `each_pass` runs first in every pass, under the fetch
  // lock (the executors' hard time limits).
  void Loop(const std::function<void()>& each_pass);

  // Executors, after a task: take the next messages if nobody else is. Returns the number taken
  // (or 1 when there was nothing to do); 0 asks the caller to kick the consumer loop.
  int TryFetchInline();

  // For the executors' take piggy-backed on a finish (worker/finisher.h FetchRequest).
  std::mutex& fetch_mutex() { return fetch_mu_; }
  bool need_recover() const { return need_recover_.load(); }
  void set_need_recover() { need_recover_ = true; }
  // The list keys in consume order, and the queue of each. REQUIRES: fetch lock held.
  std::vector<std::string> ConsumeKeys(std::vector<std::string>* key_queues) const;
  // Dispatches taken messages; returns how many. REQUIRES: fetch lock held.
  int HandleFetchedBatch(std::vector<Fetched> fetched);
  // Restores messages taken after shutdown requeued what it holds.
  void GiveBack(const std::vector<Fetched>& fetched);

  // Shutdown: the ETA-held jobs, removed from the consumer (none is taken from then on).
  std::vector<std::shared_ptr<Job>> TakeEtaHeld();
  // `inspect scheduled`: the ETA-held jobs by due time.
  std::vector<std::pair<double, std::shared_ptr<Job>>> EtaHeld();

 private:
  // --max-tasks spent or --exit-when-idle reached, with nothing held: sets shutdown, logs why.
  bool ExitConditionMet(bool took, std::chrono::steady_clock::time_point* busy_at);
  // Waits for a finished job (room), the next ETA, or the poll pause.
  void WaitForWork(int room, uint64_t kicks_seen, std::chrono::microseconds* idle_wait);
  // Takes up to `room` messages and dispatches them. REQUIRES: fetch lock held.
  int FetchAndHandle(int room);
  void HandleFetched(Fetched fetched);
  // Acks `fetched` onto the dead-letter list with `reason`; `partial` (what the decoder could
  // read) names the task in the entry and the log line.
  void DeadLetter(const Fetched& fetched, const celery::TaskMessage& partial,
                  const std::string& reason);
  // Stores the refusal's result, acks, logs, sends its event.
  void Refuse(const Job& job, const Refusal& refusal, bool not_registered);
  void PromoteDueEta(double now);
  void Heartbeat(double now);

  const WorkerOptions& options_;
  const TaskRegistry& registry_;
  BrokerApi& broker_;
  ResultStoreApi& results_;
  EventDispatcher& events_;
  WorkerMetrics& metrics_;
  WorkerState& state_;

  std::mutex fetch_mu_;
  std::vector<std::string> queue_order_;             // guarded by fetch_mu_; round-robin order
  std::multimap<double, std::shared_ptr<Job>> eta_;  // guarded by fetch_mu_; by due time
  std::atomic<bool> need_recover_{false};
};

}  // namespace warmpool::worker
