#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/broker.h"
#include "worker/canvas.h"
#include "worker/events.h"
#include "worker/result_store.h"
#include "worker/task_registry.h"
#include "worker/worker_metrics.h"
#include "worker/worker_options.h"

namespace warmpool::worker {

class HealthServer;
class RemoteControl;
struct Job;
struct Outcome;
struct Finishing;
struct FetchRequest;

// The worker: a consumer loop (main thread of Run) that takes messages with their bookkeeping
// in one Lua script, holds ETA tasks, enforces hard time limits, sends heartbeats, refreshes its
// unacked scores and sweeps stale ones; and `concurrency` executor threads that run tasks, store
// results and ack. Delivery is at-least-once: a message is acked only after its result is stored
// (acks_late) and is restored to its queue when this worker stops before finishing it.
//
// Thread-safety: construct and Run() on one thread; RequestShutdown() may be called from any
// thread (the signal thread in main.cpp).
class Worker {
 public:
  // `registry` must outlive the worker. Throws std::runtime_error when --health-listen cannot
  // bind.
  Worker(WorkerOptions options, const TaskRegistry& registry);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Consumes until RequestShutdown(), then drains (see docs/worker.md) and returns the exit
  // code: 0 after a clean warm or cold shutdown.
  int Run();

  // Warm shutdown: stop taking, wait up to --grace-seconds for running tasks, requeue the rest.
  // `cold` (second signal, SIGQUIT): requeue running tasks at once.
  void RequestShutdown(bool cold);

  // True when executor threads were abandoned (stuck past a time limit); main should _exit.
  bool HasAbandonedThreads() const { return abandoned_threads_.load() > 0; }

  // Bound port of --health-listen (0 when off).
  int health_port() const;

 private:
  // Stops and joins the executor threads, then the finisher. Idempotent.
  void JoinThreads();
  // Main-thread steps.
  bool ConnectAndRecover();
  // Takes up to `room` messages and dispatches them. REQUIRES: fetch_mu_ held.
  int FetchAndHandle(int room);
  int HandleFetchedBatch(std::vector<Fetched> fetched);  // REQUIRES: fetch_mu_ held
  std::vector<std::string> ConsumeKeys(std::vector<std::string>* key_queues) const;
  // Executors, after a task: take the next messages if nobody else is. Returns the number taken
  // (or 1 when there was nothing to do); 0 asks the caller to kick the consumer loop.
  int TryFetchInline();
  void KickConsumer();  // wakes the consumer loop
  void HandleFetched(Fetched fetched);
  // Acks `fetched` onto the dead-letter list with `reason`; `partial` (what the decoder could
  // read) names the task in the entry and the log line.
  void DeadLetter(const Fetched& fetched, const celery::TaskMessage& partial,
                  const std::string& reason);
  void PromoteDueEta(double now);
  // Stops running jobs past their hard time limit or asked to terminate by revoke: FAILURE
  // TimeLimitExceeded / REVOKED 'terminated' is stored at once. REQUIRES: fetch_mu_ held.
  void CheckHardLimits();
  // Marks a running job abandoned, asks it to stop and replaces its executor thread. False when
  // it already finished.
  bool Abandon(const std::shared_ptr<Job>& job);
  void Heartbeat(double now);
  void Shutdown();
  bool Held(const std::string& tag);
  bool Revoked(const std::string& id);
  void EnqueueReady(std::shared_ptr<Job> job);

  // Executor threads.
  void ExecutorLoop(int slot);
  // Runs the task and finishes it. Returns how many messages it took in the same round trip,
  // or -1 when it did not try (the caller then calls TryFetchInline).
  int RunJob(const std::shared_ptr<Job>& job);
  // Writes the outcome (result + ack, or republish) retrying Redis errors until done or until a
  // hard exit is ordered. Then forgets the job.
  void Finish(const std::shared_ptr<Job>& job, const Outcome& outcome);
  // Finisher thread: writes finished jobs' results and acks in batches (one round trip each
  // for many tasks), so a short task costs a fraction of a round trip.
  void FinisherLoop();
  // Stores results and acks for `batch`; `kick` wakes the consumer loop for the freed room.
  // With `fetch`, the first attempt also takes messages in the same pipeline.
  void WriteBatch(std::vector<Finishing>& batch, bool kick, FetchRequest* fetch);
  // The canvas of a finished job (worker/canvas.h): the messages to push go into `ack` (sent in
  // the script that acks), chain steps failed with it into `extra`, the chord step into `chord`
  // (same-server backend only). Bad canvas data is logged (canvas_invalid) and skipped.
  void PlanJobCanvas(const Job& job, const Outcome& out, CanvasOutcome outcome, double now,
                     Broker::AckOp* ack, std::vector<celery::ResultMeta>* extra,
                     std::optional<ChordPart>* chord);
  void Forget(const std::shared_ptr<Job>& job, bool kick = true);
  void Requeue(const std::shared_ptr<Job>& job, const char* reason);
  void LogTask(const Job& job, const std::string& state, double runtime, const std::string& detail);

  double Now() const;
  // Remote-control answers (`celery inspect active` / `reserved` / `scheduled` / `stats`).
  // Celery's Request.info() of `job`; time_start null when it has not started.
  nlohmann::json RequestInfo(const Job& job, const nlohmann::json& time_start) const;
  nlohmann::json ActiveTasks();
  nlohmann::json ReservedTasks();
  nlohmann::json ScheduledTasks();
  nlohmann::json Stats();

  // Constant after construction.
  const WorkerOptions options_;
  const TaskRegistry& registry_;
  bool same_server_ = false;  // result backend on the broker's server: one script per finish
  std::unique_ptr<WorkerMetrics> metrics_;
  std::unique_ptr<Broker> broker_;
  std::unique_ptr<ResultStore> results_;
  std::unique_ptr<EventDispatcher> events_;
  std::unique_ptr<HealthServer> health_;
  std::unique_ptr<RemoteControl> control_;  // made in Run(), stopped in Shutdown()

  std::atomic<bool> shutdown_{false};
  std::atomic<bool> cold_{false};
  std::atomic<bool> hard_exit_{false};  // Finish() gives up retrying
  std::atomic<bool> ready_{false};      // /readyz
  std::atomic<long> processed_{0};
  std::atomic<int> abandoned_threads_{0};
  std::atomic<std::chrono::steady_clock::rep> last_tick_{0};  // /healthz: main loop alive

  // Consumer state, guarded by fetch_mu_: held by the consumer loop while it works, and by an
  // executor that takes the next messages itself (TryFetchInline). Never held while waiting.
  std::mutex fetch_mu_;
  std::vector<std::string> queue_order_;             // round-robin order
  std::multimap<double, std::shared_ptr<Job>> eta_;  // ETA-held jobs by due time
  std::atomic<bool> need_recover_{false};

  std::mutex mu_;
  std::condition_variable work_cv_;              // executors: ready_jobs_ or stop
  std::condition_variable main_cv_;              // main loop: a job finished, or shutdown
  std::deque<std::shared_ptr<Job>> ready_jobs_;  // guarded by mu_
  std::unordered_map<std::string, std::shared_ptr<Job>> held_;  // guarded by mu_; tag -> job
  std::map<int, std::shared_ptr<Job>> running_;                 // guarded by mu_; slot -> job
  std::map<std::string, long> totals_;  // guarded by mu_; finished tasks per name (stats)
  std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  std::unordered_set<std::string> revoked_;  // guarded by mu_; task ids revoked by control
  std::map<std::string, int> terminate_;     // guarded by mu_; running ids to stop -> signum
  int reserved_ = 0;                         // guarded by mu_; ready + running + finishing
  uint64_t kicks_ = 0;                       // guarded by mu_; bumped to wake the consumer loop
  bool stop_executors_ = false;              // guarded by mu_
  std::vector<std::thread> threads_;         // guarded by mu_; index = slot
  std::condition_variable finish_cv_;        // finisher: finish_queue_ or stop
  std::vector<Finishing> finish_queue_;      // guarded by mu_
  bool stop_finisher_ = false;               // guarded by mu_
  std::thread finisher_;
};

}  // namespace warmpool::worker
