#include "tests/support/redis_server.h"

#include <signal.h>
#include <stdexcept>

namespace warmpool::testing {

TestRedisServer::TestRedisServer(std::vector<std::string> extra_args)
    : port_(FreePort()), dir_(MakeTempDir("redis")), extra_args_(std::move(extra_args)) {
  Start();
}

std::string TestRedisServer::password() const {
  for (size_t i = 0; i + 1 < extra_args_.size(); ++i) {
    if (extra_args_[i] == "--requirepass") return extra_args_[i + 1];
  }
  return "";
}

TestRedisServer::~TestRedisServer() { Stop(); }

std::string TestRedisServer::url(int db) const {
  return "redis://127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
}

std::string TestRedisServer::address(int db) const {
  return "127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
}

void TestRedisServer::Start() {
  std::vector<std::string> argv = {"redis-server",
                                   "--port",
                                   std::to_string(port_),
                                   "--bind",
                                   "127.0.0.1",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--dir",
                                   dir_,
                                   "--daemonize",
                                   "no",
                                   "--protected-mode",
                                   "no"};
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  proc_ = std::make_unique<ChildProcess>(argv, dir_ + "/redis.log");
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
  if (!password().empty()) {
    argv.push_back("--no-auth-warning");
    argv.push_back("-a");
    argv.push_back(password());
  }
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
