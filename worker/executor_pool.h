#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "worker/broker_api.h"
#include "worker/consumer.h"
#include "worker/events.h"
#include "worker/finisher.h"
#include "worker/job.h"
#include "worker/result_store.h"
#include "worker/task_registry.h"
#include "worker/worker_metrics.h"
#include "worker/worker_options.h"
#include "worker/worker_state.h"

namespace warmpool::worker {

// `concurrency` executor threads that run ready jobs: skip those revoked, expired or already
// done, arm the time limits, ack early (without acks_late), store STARTED (track_started), call
// the task and hand the outcome to the finisher - writing it on the same thread, with the next
// take in the same pipeline, when no other job waits. Hard time limits and revoke(terminate)
// abandon the job: its thread is detached and replaced, its outcome written at once.
class ExecutorPool {
 public:
  ExecutorPool(const WorkerOptions& options, const TaskRegistry& registry, bool same_server,
               BrokerApi& broker, ResultStoreApi& results, EventDispatcher& events,
               WorkerMetrics& metrics, WorkerState& state, Consumer& consumer, Finisher& finisher);

  void Start();
  // Stops and joins the threads (not the detached ones). Idempotent.
  void Join();

  // Stops running jobs past their hard time limit or asked to terminate by revoke: FAILURE
  // TimeLimitExceeded / REVOKED 'terminated' is written at once. REQUIRES: the consumer's
  // fetch lock held (the consumer loop calls it each pass).
  void CheckHardLimits();

  // Shutdown: the ready jobs not started, now abandoned and no longer reserved.
  std::vector<std::shared_ptr<Job>> TakeQueued();
  // Shutdown: the running jobs; AbandonForShutdown gives one up (false when it already
  // finished): cancelled, its thread detached, no longer reserved.
  std::vector<std::shared_ptr<Job>> Running();
  bool AbandonForShutdown(const std::shared_ptr<Job>& job);

 private:
  void Loop(int slot);
  // Runs the task and finishes it. Returns how many messages it took in the same round trip,
  // or -1 when it did not try (the caller then calls TryFetchInline).
  int RunJob(const std::shared_ptr<Job>& job);
  // REVOKED (revoked, expired) or a skipped duplicate before the task runs; nullopt: run it.
  std::optional<Outcome> PreCheck(const Job& job);
  // The task context and its soft and hard deadlines.
  void Prepare(Job& job);
  // Early ack and STARTED, best effort.
  void WriteStarted(const Job& job);
  int HandOff(const std::shared_ptr<Job>& job, Outcome out);
  // Writes `batch` on this thread, with the next take in the same pipeline when it can.
  int FinishInline(std::vector<Finishing>& batch);
  // Marks a running job abandoned, asks it to stop and replaces its executor thread. False when
  // it already finished.
  bool Abandon(const std::shared_ptr<Job>& job);

  const WorkerOptions& options_;
  const TaskRegistry& registry_;
  const bool same_server_;
  BrokerApi& broker_;
  ResultStoreApi& results_;
  EventDispatcher& events_;
  WorkerMetrics& metrics_;
  WorkerState& state_;
  Consumer& consumer_;
  Finisher& finisher_;
};

}  // namespace warmpool::worker
