#pragma once

#include <memory>
#include <string>

#include "tests/support/process.h"

namespace warmpool::testing {

// A real redis-server on a free loopback port, in its own temp dir, no persistence. Started by
// the constructor (waits until it answers PING); killed by the destructor. Stop()/Start() restart
// it on the same port (for "Redis restarted" tests). Test-only.
class TestRedisServer {
 public:
  // `extra_args` are appended to redis-server's command line (e.g. {"--requirepass", "pw"}).
  explicit TestRedisServer(std::vector<std::string> extra_args = {});
  ~TestRedisServer();
  TestRedisServer(const TestRedisServer&) = delete;
  TestRedisServer& operator=(const TestRedisServer&) = delete;

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1"; }
  std::string url(int db = 0) const;      // redis://127.0.0.1:<port>/<db>
  std::string address(int db = 0) const;  // 127.0.0.1:<port>/<db>

  void Start();
  void Stop();  // SIGTERM and wait; nothing saved

  // Runs redis-cli against this server with `args`; returns trimmed stdout.
  std::string Cli(const std::vector<std::string>& args, int db = 0) const;

  // Password given with --requirepass in extra_args, if any (used by Cli).
  std::string password() const;

 private:
  int port_;
  std::string dir_;
  std::vector<std::string> extra_args_;
  std::unique_ptr<ChildProcess> proc_;
};

// Path of /usr/bin/python3 (Debian's, which has celery), and of tests/integration/python.
std::string PythonInterpreter();
std::string PythonScriptsDir();

}  // namespace warmpool::testing
