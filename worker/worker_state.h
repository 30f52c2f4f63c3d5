#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "worker/job.h"

namespace warmpool::worker {

// What the worker's parts (consumer, executor pool, finisher, worker) share: the jobs it holds
// and where each one is, and the flags of its lifecycle. One mutex guards all of it, so a job
// moves between ready, running, finishing and forgotten, and `reserved` with it, in one step:
// the consumer's room, the executors' hand-off and shutdown's wait all read a consistent state.
struct WorkerState {
  std::atomic<bool> shutdown{false};
  std::atomic<bool> cold{false};
  std::atomic<bool> hard_exit{false};  // the finisher gives up retrying
  std::atomic<bool> ready{false};      // /readyz
  std::atomic<long> processed{0};
  std::atomic<int> abandoned_threads{0};
  std::atomic<std::chrono::steady_clock::rep> last_tick{0};  // /healthz: consumer loop alive

  std::mutex mu;
  std::condition_variable work_cv;    // executors: `ready_jobs` or `stop_executors`
  std::condition_variable main_cv;    // consumer loop, shutdown: room freed, a kick, shutdown
  std::condition_variable finish_cv;  // finisher: `finish_queue` or `stop_finisher`
  std::deque<std::shared_ptr<Job>> ready_jobs;                 // guarded by mu
  std::unordered_map<std::string, std::shared_ptr<Job>> held;  // guarded by mu; tag -> job
  std::map<int, std::shared_ptr<Job>> running;                 // guarded by mu; slot -> job
  std::map<std::string, long> totals;       // guarded by mu; finished tasks per name (stats)
  std::unordered_set<std::string> revoked;  // guarded by mu; task ids revoked by control
  std::map<std::string, int> terminate;     // guarded by mu; running ids to stop -> signum
  int reserved = 0;                         // guarded by mu; ready + running + finishing
  uint64_t kicks = 0;                       // guarded by mu; bumped to wake the consumer loop
  bool stop_executors = false;              // guarded by mu
  std::vector<std::thread> threads;         // guarded by mu; executor threads, index = slot
  std::vector<Finishing> finish_queue;      // guarded by mu
  bool stop_finisher = false;               // guarded by mu
  long max_tasks = 0;                       // --max-tasks; 0 = no limit
  long taken = 0;                           // guarded by mu; messages taken (for --max-tasks)

  bool Held(const std::string& tag);
  bool Revoked(const std::string& id);
  // Counts `job` as reserved and hands it to the executors.
  void EnqueueReady(std::shared_ptr<Job> job);
  // Wakes the consumer loop.
  void Kick();
  // Messages the consumer may take now: the prefetch room (`extra` counts jobs about to be
  // forgotten), capped by what --max-tasks leaves. REQUIRES: mu held.
  int RoomLocked(int prefetch_limit, int extra = 0) const;
  // Counts `n` taken messages against --max-tasks; returns how many of them fit (the rest must be
  // given back unstarted).
  size_t CountTaken(size_t n);
  // --max-tasks reached. REQUIRES: mu held.
  bool TaskBudgetSpentLocked() const { return max_tasks > 0 && taken >= max_tasks; }
  // A finished (or given up) job: no longer held nor reserved; `kick` wakes the consumer loop
  // for the freed room.
  void Forget(const std::shared_ptr<Job>& job, bool kick);
};

}  // namespace warmpool::worker
