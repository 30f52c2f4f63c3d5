#include "worker/worker_state.h"

#include <algorithm>

namespace warmpool::worker {

bool WorkerState::Held(const std::string& tag) {
  std::lock_guard lock(mu);
  return held.count(tag) > 0;
}

bool WorkerState::Revoked(const std::string& id) {
  std::lock_guard lock(mu);
  return revoked.count(id) > 0;
}

void WorkerState::EnqueueReady(std::shared_ptr<Job> job) {
  {
    std::lock_guard lock(mu);
    ++reserved;
    ready_jobs.push_back(std::move(job));
  }
  work_cv.notify_one();
}

int WorkerState::RoomLocked(int prefetch_limit, int extra) const {
  long room = prefetch_limit - reserved + extra;
  if (max_tasks > 0) room = std::min(room, max_tasks - taken);
  return static_cast<int>(room);
}

size_t WorkerState::CountTaken(size_t n) {
  std::lock_guard lock(mu);
  if (max_tasks > 0) n = std::min(n, static_cast<size_t>(std::max(0L, max_tasks - taken)));
  taken += static_cast<long>(n);
  return n;
}

void WorkerState::Kick() {
  {
    std::lock_guard lock(mu);
    ++kicks;
  }
  main_cv.notify_all();
}

void WorkerState::Forget(const std::shared_ptr<Job>& job, bool kick) {
  job->phase.store(job->phase.load() == kAbandoned ? kAbandoned : kDone);
  {
    std::lock_guard lock(mu);
    held.erase(job->fetched.tag);
    --reserved;
    if (kick) ++kicks;
  }
  if (kick || shutdown.load()) main_cv.notify_all();
}

}  // namespace warmpool::worker
