#include "bench/scaler/soak_stats.h"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

namespace warmpool::bench {

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

long StatusField(const std::string& status, const std::string& field) {
  const size_t pos = status.find("\n" + field + ":");
  if (pos == std::string::npos) return -1;
  return std::atol(status.c_str() + pos + field.size() + 2);
}

long CountFds(pid_t pid) {
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (!dir) return -1;
  long n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n;
}

double CpuSeconds(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {  // field 3 is the state; 14 utime, 15 stime
    if (i == 14) utime = std::stol(field);
    if (i == 15) {
      stime = std::stol(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

ProcSample ReadProc(pid_t pid) {
  ProcSample s;
  // append, not "lit" + string: GCC 12 at -O3 misreads the latter (-Werror=restrict).
  std::string path = "/proc/";
  path.append(std::to_string(pid)).append("/status");
  const std::string status = std::string("\n").append(ReadFile(path));
  s.rss_kib = StatusField(status, "VmRSS");
  s.threads = StatusField(status, "Threads");
  s.fds = CountFds(pid);
  s.cpu_s = CpuSeconds(pid);
  return s;
}

long long InfoField(std::string_view info, std::string_view field) {
  for (size_t pos = 0; (pos = info.find(field, pos)) != std::string_view::npos;
       pos += field.size()) {
    const bool line_start = pos == 0 || info[pos - 1] == '\n';
    if (line_start && pos + field.size() < info.size() && info[pos + field.size()] == ':') {
      return std::atoll(std::string(info.substr(pos + field.size() + 1, 24)).c_str());
    }
  }
  return -1;
}

Percentiles Summarize(std::vector<float> ms) {
  Percentiles p;
  if (ms.empty()) return p;
  std::sort(ms.begin(), ms.end());
  p.n = ms.size();
  p.p50_ms = ms[ms.size() / 2];
  p.p99_ms = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  p.max_ms = ms.back();
  return p;
}

double Slope(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxx > 0 ? sxy / sxx : 0;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

long HttpGetSize(int port, const std::string& path, int timeout_ms) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto wait_for = [&](short events) {
    pollfd p{fd, events, 0};
    return poll(&p, 1, timeout_ms) == 1;
  };
  long total = -1;
  std::string head;
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if ((connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 || errno == EINPROGRESS) &&
      wait_for(POLLOUT) &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    total = 0;
    char buf[16384];
    for (int reads = 0; reads < 100000; ++reads) {  // bounded: 1.6 GB at most
      if (!wait_for(POLLIN)) {
        total = -1;
        break;
      }
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n < 0) {
        total = -1;
        break;
      }
      if (n == 0) break;
      if (head.size() < 16) head.append(buf, static_cast<size_t>(std::min<ssize_t>(n, 16)));
      total += n;
    }
  }
  close(fd);
  if (total > 0 && head.find(" 200") == std::string::npos) return -1;
  return total;
}

}  // namespace warmpool::bench
