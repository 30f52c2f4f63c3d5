#include "scaler/connection_readers.h"

namespace warmpool::scaler {

ConnectionReaders::ConnectionReaders(size_t threads_per_connection)
    : threads_per_connection_(threads_per_connection == 0 ? 1 : threads_per_connection) {}

ConnectionReaders::~ConnectionReaders() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    for (auto& [name, lane] : lanes_) {
      lane->jobs.clear();
      lane->cv.notify_all();
    }
  }
  for (auto& [name, lane] : lanes_) {
    for (auto& t : lane->threads) t.join();
  }
}

void ConnectionReaders::Submit(const std::string& connection, std::function<void()> job) {
  std::lock_guard lock(mu_);
  if (stop_) return;
  auto& lane = lanes_[connection];
  if (!lane) {
    lane = std::make_unique<Lane>();
    for (size_t i = 0; i < threads_per_connection_; ++i) {
      lane->threads.emplace_back([this, l = lane.get()] { Work(l); });
    }
  }
  lane->jobs.push_back(std::move(job));
  lane->cv.notify_one();
}

size_t ConnectionReaders::queued(const std::string& connection) const {
  std::lock_guard lock(mu_);
  auto it = lanes_.find(connection);
  return it == lanes_.end() ? 0 : it->second->jobs.size();
}

void ConnectionReaders::Work(Lane* lane) {
  std::unique_lock lock(mu_);
  while (true) {
    lane->cv.wait(lock, [&] { return stop_ || !lane->jobs.empty(); });
    if (stop_) return;
    std::function<void()> job = std::move(lane->jobs.front());
    lane->jobs.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace warmpool::scaler
