#include "worker/worker_state.h"

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
