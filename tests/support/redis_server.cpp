#include "tests/support/redis_server.h"

#include <signal.h>
#include <stdexcept>

namespace warmpool::testing {

TestRedisServer::TestRedisServer() : port_(FreePort()), dir_(MakeTempDir("redis")) { Start(); }

TestRedisServer::~TestRedisServer() { Stop(); }

std::string TestRedisServer::url(int db) const {
  return "redis://127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
}

std::string TestRedisServer::address(int db) const {
  return "127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
}

void TestRedisServer::Start() {
  proc_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{"redis-server", "--port", std::to_string(port_), "--bind",
                               "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir_,
                               "--daemonize", "no", "--protected-mode", "no"},
      dir_ + "/redis.log");
  bool up = WaitFor([&] { return Cli({"PING"}) == "PONG"; }, std::chrono::seconds(10));
  if (!up) throw std::runtime_error("redis-server did not start: " + proc_->Log());
}

void TestRedisServer::Stop() {
  if (!proc_) return;
  proc_->Signal(SIGTERM);
  if (proc_->Wait(std::chrono::seconds(5)) == -1) proc_->Signal(SIGKILL);
  proc_->Wait(std::chrono::seconds(5));
  proc_.reset();
}

std::string TestRedisServer::Cli(const std::vector<std::string>& args, int db) const {
  std::vector<std::string> argv = {"redis-cli", "-p", std::to_string(port_), "-n",
                                   std::to_string(db)};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = RunCommand(argv, std::chrono::seconds(10));
  std::string out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string PythonInterpreter() { return "/usr/bin/python3"; }

std::string PythonScriptsDir() {
  return std::string(WARMPOOL_SOURCE_DIR) + "/tests/integration/python";
}

}  // namespace warmpool::testing
