#include "tests/support/process.h"

#include <arpa/inet.h>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <netinet/in.h>
#include <signal.h>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace warmpool::testing {
namespace {

[[noreturn]] void ExecChild(const std::vector<std::string>& argv, int out_fd,
                            const std::map<std::string, std::string>& env) {
  dup2(out_fd, STDOUT_FILENO);
  dup2(out_fd, STDERR_FILENO);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  _exit(127);
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path,
                           const std::map<std::string, std::string>& env)
    : log_path_(log_path) {
  int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) throw std::runtime_error("cannot open log " + log_path);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) ExecChild(argv, fd, env);
  close(fd);
}

ChildProcess::~ChildProcess() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
}

void ChildProcess::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

bool ChildProcess::Running() {
  if (reaped_) return false;
  pid_t r = waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) reaped_ = true;
  return !reaped_;
}

int ChildProcess::Wait(std::chrono::milliseconds timeout) {
  WaitFor([&] { return !Running(); }, timeout);
  return reaped_ ? DecodeStatus(status_) : -1;
}

std::string ChildProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::map<std::string, std::string>& env) {
  std::string dir = MakeTempDir("cmd");
  std::string log = dir + "/out.log";
  int code;
  std::string output;
  {
    ChildProcess child(argv, log, env);
    code = child.Wait(timeout);
    if (code == -1) {
      child.Signal(SIGKILL);
      child.Wait(std::chrono::seconds(5));
    }
    output = child.Log();
  }
  std::remove(log.c_str());
  rmdir(dir.c_str());
  return {code, output};
}

namespace {

// Binds 127.0.0.1:port (0 = any); the port bound, or -1.
int BindLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  int bound = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    bound = ntohs(addr.sin_port);
  }
  close(fd);
  return bound;
}

// The low end of the kernel's ephemeral port range (32768 when unreadable).
int EphemeralLow() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  in >> low;
  return in ? low : 32768;
}

}  // namespace

int FreePort() {
  // From the 10,000 ports below the ephemeral range, not from it: an ephemeral port handed out
  // here can be taken by any process's next outgoing connection (a parallel test's client)
  // before the server under test binds it ("address in use"). Each process starts at its own
  // offset, so parallel tests seldom try the same port.
  static const int low = EphemeralLow();
  constexpr int kSpan = 10000;
  if (low >= kSpan + 1024) {
    static std::atomic<long> next{getpid() * 7919L};
    for (int tries = 0; tries < 200; ++tries) {
      const int port = low - kSpan + static_cast<int>(next++ % kSpan);
      if (BindLoopback(port) == port) return port;
    }
  }
  const int port = BindLoopback(0);
  if (port < 0) throw std::runtime_error("FreePort: bind failed");
  return port;
}

std::string MakeTempDir(const std::string& tag) {
  std::string tmpl = "/tmp/warmpool-" + tag + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

}  // namespace warmpool::testing
