#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "worker/broker_api.h"
#include "worker/events.h"
#include "worker/finish_plan.h"
#include "worker/job.h"
#include "worker/result_store.h"
#include "worker/worker_metrics.h"
#include "worker/worker_state.h"

namespace warmpool::worker {

// A take piggy-backed on a finish (the executors' inline path): the finish and the take go in
// one pipeline.
struct FetchRequest {
  std::vector<std::string> keys;    // consume order
  std::vector<std::string> queues;  // queue of each key
  int room = 0;
  std::vector<Fetched> fetched;
  bool attempted = false;                              // the combined pipeline was sent
  bool ok = false;                                     // ... and every reply was read without error
  std::unique_lock<std::mutex>* fetch_lock = nullptr;  // released when the attempt fails
};

// Writes finished jobs' results and acks (worker/finish_plan.h decides what), in batches: one
// round trip for many tasks, so a short task costs a fraction of one. Results go before acks:
// a crash in between redelivers a task whose SUCCESS is stored, which the executor then skips.
// A Redis error is retried with backoff until the write is done, or until a hard exit is
// ordered (the messages then stay unacked, restored at restart or by a visibility sweep).
// Its own thread writes what the executors queue; an executor with nothing else to do writes
// its batch itself (DeferIfBusy + WriteBatch).
class Finisher {
 public:
  Finisher(FinishSettings settings, int backend_db, long result_expires, BrokerApi& broker,
           ResultStoreApi& results, EventDispatcher& events, WorkerMetrics& metrics,
           WorkerState& state);
  ~Finisher();  // Stop()
  Finisher(const Finisher&) = delete;
  Finisher& operator=(const Finisher&) = delete;

  void Start();  // the finisher thread
  // Writes what is queued, then stops the thread. Idempotent.
  void Stop();

  // Queues `job`'s outcome for the finisher thread.
  void Finish(const std::shared_ptr<Job>& job, const Outcome& out);
  // An executor's hand-off: while other jobs wait for an executor, queues `job` for the
  // finisher and returns true; otherwise moves what waits for the finisher, then `job`, into
  // `batch` for the caller to write (WriteBatch) and returns false.
  bool DeferIfBusy(const std::shared_ptr<Job>& job, Outcome out, std::vector<Finishing>* batch);

  // Stores results and acks for `batch`, then forgets its jobs; `kick` wakes the consumer loop
  // for the freed room. With `fetch` (same-server backend only), the first attempt also takes
  // messages in the same pipeline.
  void WriteBatch(std::vector<Finishing>& batch, bool kick, FetchRequest* fetch);

 private:
  void Loop();
  std::vector<FinishPlan> Plan(const std::vector<Finishing>& batch) const;
  // One attempt; throws RedisError. `stored`/`acked` say what is already done.
  void WriteOnce(const std::vector<FinishPlan>& plans, FetchRequest* fetch, bool* stored,
                 bool* acked);
  // False when Redis failed after a hard exit was ordered: the batch is then left unacked.
  bool WriteWithRetry(const std::vector<FinishPlan>& plans, const std::vector<Finishing>& batch,
                      FetchRequest* fetch);
  // After the write: totals, log lines, task events, forget.
  void Settle(const std::vector<Finishing>& batch, const std::vector<FinishPlan>& plans, bool kick);

  const FinishSettings settings_;
  const int backend_db_;
  const long result_expires_;
  BrokerApi& broker_;
  ResultStoreApi& results_;
  EventDispatcher& events_;
  WorkerMetrics& metrics_;
  WorkerState& state_;
  std::thread thread_;
};

}  // namespace warmpool::worker
