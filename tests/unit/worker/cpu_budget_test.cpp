#include "worker/cpu_budget.h"

#include <sched.h>

#include <catch2/catch.hpp>

namespace warmpool::worker {
namespace {

TEST_CASE("A cgroup v2 CPU limit counts as whole CPUs, rounded up", "[worker][cpu]") {
  CHECK(CpusFromCgroupV2("200000 100000") == 2);
  CHECK(CpusFromCgroupV2("150000 100000\n") == 2);  // limits.cpu: 1500m
  CHECK(CpusFromCgroupV2("50000 100000") == 1);     // 500m still gets a thread
  CHECK(CpusFromCgroupV2("max 100000") == std::nullopt);
  CHECK(CpusFromCgroupV2("") == std::nullopt);
  CHECK(CpusFromCgroupV2("garbage") == std::nullopt);
  CHECK(CpusFromCgroupV2("100000 0") == std::nullopt);
}

TEST_CASE("A cgroup v1 quota of -1 is no limit", "[worker][cpu]") {
  CHECK(CpusFromCgroupV1(-1, 100000) == std::nullopt);
  CHECK(CpusFromCgroupV1(400000, 100000) == 4);
  CHECK(CpusFromCgroupV1(250000, 100000) == 3);
}

TEST_CASE("Imagery threads share the CPUs among concurrent tasks unless set", "[worker][cpu]") {
  CHECK(ImageryThreads(0, 16, 1) == 16);
  CHECK(ImageryThreads(0, 16, 4) == 4);
  CHECK(ImageryThreads(0, 2, 4) == 1);   // never 0
  CHECK(ImageryThreads(6, 16, 4) == 6);  // the flag wins
}

TEST_CASE("This process has at least one CPU, no more than its affinity allows", "[worker][cpu]") {
  const int cpus = AvailableCpus();
  CHECK(cpus >= 1);
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  CHECK(cpus <= CPU_COUNT(&set));
}

}  // namespace
}  // namespace warmpool::worker
