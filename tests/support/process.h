#pragma once

#include <chrono>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace warmpool::testing {

// A child process started with fork/exec; stdout+stderr go to a log file. Killed (SIGKILL) on
// destruction if still running. Test-only helper.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path,
               const std::map<std::string, std::string>& env = {});
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // Waits up to `timeout` for exit; returns the exit code (128+signal when killed), or -1 on
  // timeout (process still running).
  int Wait(std::chrono::milliseconds timeout);
  bool Running();
  std::string Log() const;  // contents of the log file so far

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  bool reaped_ = false;
  std::string log_path_;
};

struct CommandResult {
  int exit_code;
  std::string output;  // stdout + stderr
};

// Runs argv to completion (killed after `timeout`), capturing output.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60),
                         const std::map<std::string, std::string>& env = {});

// A TCP port on 127.0.0.1 that was free a moment ago, from below the kernel's ephemeral range
// (so no outgoing connection takes it meanwhile) where there is room.
int FreePort();

// A fresh temporary directory (removed by the caller if wanted).
std::string MakeTempDir(const std::string& tag);

// Polls `condition` every 20 ms until it holds or `timeout` passes; returns its last value.
template <typename F>
bool WaitFor(F condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    struct timespec ts {
      0, 20 * 1000 * 1000
    };
    nanosleep(&ts, nullptr);
  }
  return condition();
}

}  // namespace warmpool::testing
