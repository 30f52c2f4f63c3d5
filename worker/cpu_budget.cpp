#include "worker/cpu_budget.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sched.h>
#include <string>

namespace warmpool::worker {
namespace {

std::optional<std::string> ReadFirstLine(const char* path) {
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) {
    return std::nullopt;
  }
  return line;
}

std::optional<long long> ParseInteger(std::string_view s) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<int> CpusFromCgroupV1(long long quota_us, long long period_us) {
  if (quota_us <= 0 || period_us <= 0) {
    return std::nullopt;
  }
  return static_cast<int>(std::max(1LL, (quota_us + period_us - 1) / period_us));
}

std::optional<int> CpusFromCgroupV2(std::string_view cpu_max) {
  const size_t space = cpu_max.find(' ');
  if (space == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view period = cpu_max.substr(space + 1);
  while (!period.empty() && (period.back() == '\n' || period.back() == ' ')) {
    period.remove_suffix(1);
  }
  const std::optional<long long> quota = ParseInteger(cpu_max.substr(0, space));  // "max": none
  const std::optional<long long> per = ParseInteger(period);
  if (!quota || !per) {
    return std::nullopt;
  }
  return CpusFromCgroupV1(*quota, *per);
}

int AvailableCpus() {
  int cpus = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    cpus = std::max(1, CPU_COUNT(&set));
  }
  std::optional<int> quota;
  if (const auto v2 = ReadFirstLine("/sys/fs/cgroup/cpu.max")) {
    quota = CpusFromCgroupV2(*v2);
  } else {
    const auto q = ReadFirstLine("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
    const auto p = ReadFirstLine("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    if (q && p) {
      const auto qv = ParseInteger(*q);
      const auto pv = ParseInteger(*p);
      if (qv && pv) {
        quota = CpusFromCgroupV1(*qv, *pv);
      }
    }
  }
  return quota ? std::min(cpus, *quota) : cpus;
}

int ImageryThreads(int requested, int available_cpus, int concurrency) {
  if (requested > 0) {
    return requested;
  }
  return std::max(1, available_cpus / std::max(1, concurrency));
}

}  // namespace warmpool::worker
