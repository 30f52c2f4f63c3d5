#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <signal.h>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"
#include "tests/support/redis_server.h"

namespace warmpool::testing {

// One real redis-server (broker = DB 0, result backend = DB 1) plus helpers to run
// warmpool-worker and the Python Celery client (tests/integration/python/worker_client.py).
class WorkerFixture {
 public:
  WorkerFixture();

  std::string broker() const { return redis.url(0); }
  std::string backend() const { return redis.url(1); }

  // Starts warmpool-worker with --broker/--result-backend/--hostname plus `extra` flags, and
  // `env` added to this process's environment.
  std::unique_ptr<ChildProcess> StartWorker(const std::vector<std::string>& extra = {},
                                            const std::string& hostname = "warmpool@test",
                                            const std::map<std::string, std::string>& env = {});
  // Runs worker_client.py with `args` (after the broker/backend flags) and parses its last
  // stdout line as JSON. Fails the test when it does not exit 0.
  nlohmann::json Client(const std::vector<std::string>& args,
                        std::chrono::seconds timeout = std::chrono::seconds(60));
  // Redis helpers (DB 0 unless given).
  long long Int(const std::vector<std::string>& args, int db = 0) const;
  std::string Cli(const std::vector<std::string>& args, int db = 0) const;
  // Waits until `key` in DB 0 is an unacked hash with `n` entries.
  bool WaitUnacked(long long n, std::chrono::milliseconds timeout);

  TestRedisServer redis;
  std::string dir;  // temp dir for logs and files
  int worker_count = 0;
};

std::string WorkerBinary();
std::string ClientScript();

// The end of most worker tests: the worker is still serving, and SIGTERM stops it with exit 0.
void CheckServingThenStopsCleanly(ChildProcess& worker);

}  // namespace warmpool::testing
