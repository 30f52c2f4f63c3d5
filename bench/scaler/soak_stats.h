#pragma once

// Figures a soak run takes from outside the process under test: /proc readings, Redis INFO
// fields, latency percentiles and a least-squares slope. Bench-only.

#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace warmpool::bench {

// One reading of a process from /proc/<pid>: resident memory, threads, open descriptors and CPU
// (user + system). Fields are -1 where /proc could not be read (the process has gone).
struct ProcSample {
  double t_s = 0;  // seconds since the run started (set by the caller)
  long rss_kib = -1;
  long threads = -1;
  long fds = -1;
  double cpu_s = -1;
};
ProcSample ReadProc(pid_t pid);

// The integer after "<field>:" in Redis INFO text; -1 when absent.
long long InfoField(std::string_view info, std::string_view field);

struct Percentiles {
  size_t n = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
};
Percentiles Summarize(std::vector<float> ms);  // by value: sorted in place

// Least-squares slope of y over x (units of y per unit of x); 0 with fewer than two points.
double Slope(const std::vector<double>& x, const std::vector<double>& y);

// The median of `values` (0 when empty).
double Median(std::vector<double> values);

// GET http://127.0.0.1:<port><path> (HTTP/1.0, one connection, `timeout_ms` for connect and
// each read): the response's size in bytes including headers, or -1 on any failure or a status
// other than 200. Loopback only.
long HttpGetSize(int port, const std::string& path, int timeout_ms);

}  // namespace warmpool::bench
