#pragma once

// How many CPU threads an imagery task may use: the CPUs the process may run on, lowered to a
// Kubernetes CPU limit (the cgroup quota), shared among the tasks that run at once.

#include <optional>
#include <string_view>

namespace warmpool::worker {

// CPUs in this process's affinity mask, lowered to the cgroup CPU quota when one is set (cgroup v2
// /sys/fs/cgroup/cpu.max, else v1 cpu.cfs_quota_us / cpu.cfs_period_us), at least 1.
int AvailableCpus();

// A cgroup v2 cpu.max line ("150000 100000": quota and period in us) as whole CPUs, rounded up;
// nullopt for "max ..." (no limit) or a line that does not parse.
std::optional<int> CpusFromCgroupV2(std::string_view cpu_max);

// A cgroup v1 quota and period (us) as whole CPUs, rounded up; nullopt when quota <= 0 (-1 = no
// limit) or period <= 0.
std::optional<int> CpusFromCgroupV1(long long quota_us, long long period_us);

// Threads per imagery task: `requested` when > 0 (--imagery-threads), else the available CPUs
// shared among `concurrency` tasks, at least 1.
int ImageryThreads(int requested, int available_cpus, int concurrency);

}  // namespace warmpool::worker
