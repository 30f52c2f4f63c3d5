#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace warmpool::scaler {

// Runs Redis reads on threads of their own per connection, so a hung Redis holds up only the
// reads of its own connection: never a gRPC thread, the stream hub, or another connection. A
// connection's threads start with its first read. Thread-safe. The destructor drops queued jobs
// and joins the running ones (each bounded by the Redis deadline).
class ConnectionReaders {
 public:
  explicit ConnectionReaders(size_t threads_per_connection);
  ~ConnectionReaders();
  ConnectionReaders(const ConnectionReaders&) = delete;
  ConnectionReaders& operator=(const ConnectionReaders&) = delete;

  void Submit(const std::string& connection, std::function<void()> job);
  // Jobs waiting for a thread on `connection` (for tests and logs).
  size_t queued(const std::string& connection) const;

 private:
  struct Lane {
    std::deque<std::function<void()>> jobs;  // guarded by mu_
    std::condition_variable cv;
    std::vector<std::thread> threads;
  };
  void Work(Lane* lane);

  const size_t threads_per_connection_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Lane>> lanes_;  // guarded by mu_
  bool stop_ = false;                                   // guarded by mu_
};

}  // namespace warmpool::scaler
