#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace warmpool::scaler {

class IsActiveStream;

// Polls every open StreamIsActive stream on one thread, so a stream costs no thread of its own
// and its reads coalesce with unary calls. The hub never waits for Redis: a stream whose reading
// is not ready is skipped and polled again as soon as a read completes (Wake) or at the next
// tick, so a hung connection delays no stream of another connection. Thread-safe. Stop() before
// destruction.
class StreamHub {
 public:
  explicit StreamHub(std::chrono::milliseconds interval);
  ~StreamHub();
  void Register(IsActiveStream* stream);
  // Waits while the hub is polling `stream` (microseconds: polls never wait for Redis), then
  // forgets it (called from OnDone).
  void Unregister(IsActiveStream* stream);
  // A Redis read completed: poll the streams that were waiting for one.
  void Wake();
  // The server is stopping: finishes every open stream with OK, and every stream registered
  // from now on at once, then waits up to `timeout` until all of them are done. True when none
  // is left open. Before the gRPC server's Shutdown, which would end them with an error.
  bool FinishAll(std::chrono::milliseconds timeout);
  void Stop();

 private:
  void Run();

  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<IsActiveStream*> streams_;  // guarded by mu_
  std::set<IsActiveStream*> waiting_;  // guarded by mu_: their reading was not ready
  IsActiveStream* polling_ = nullptr;  // guarded by mu_
  bool woken_ = false;                 // guarded by mu_
  bool added_ = false;                 // guarded by mu_
  bool finishing_ = false;             // guarded by mu_: FinishAll was called
  bool stop_ = false;                  // guarded by mu_
  std::thread thread_;
};

}  // namespace warmpool::scaler
