// task_repeat_bench: the change-detection task run again and again in one process, as a worker
// runs tasks, with the pair decoded whole (RunChangeJob's default within its budget) and read in
// strips (whole_decode_max_mb = 0), alternated round by round on the same DEFLATE GeoTIFFs.
// Prints each task's time and minor page faults, then the medians of rounds 2..N (round 1 also
// pays for the process's first GDAL and page set-up). Exits 1 if the two ways' results differ.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/resource.h>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/imagery/bench_common.h"
#include "imagery/change_job.h"

namespace {

using namespace warmpool::imagery;
using Clock = std::chrono::steady_clock;

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

}  // namespace

int main(int argc, char** argv) {
  int size = 4096;
  int threads = 2;
  int rounds = 5;
  std::string work_dir =
      (std::filesystem::temp_directory_path() / "warmpool-task-repeat-bench").string();
  CLI::App app{"task_repeat_bench: repeated tasks, the pair decoded whole vs read in strips"};
  app.add_option("--size", size, "image side in pixels (4-band uint16 DEFLATE pair)")
      ->check(CLI::Range(64, 16384));
  app.add_option("--threads", threads, "CPU threads")->check(CLI::Range(1, 256));
  app.add_option("--rounds", rounds, "tasks of each kind (medians of rounds 2..N)")
      ->check(CLI::Range(2, 100));
  app.add_option("--work-dir", work_dir, "where the GeoTIFFs are written");
  CLI11_PARSE(app, argc, argv);

  const auto paths = WriteSyntheticPair(bench::BenchPair(size), work_dir, "repeat", true);
  ComputeBackendPtr backend = MakeCpuBackend(threads);
  std::vector<double> whole_s, strips_s;
  nlohmann::json results[2];
  bool same = true;
  for (int round = 1; round <= rounds; ++round) {
    for (const bool whole : {false, true}) {
      ChangeJob job;
      job.before_path = paths["before"];
      job.after_path = paths["after"];
      job.output_dir = work_dir + "/out";
      job.options.threads = threads;
      job.whole_decode_max_mb = whole ? size_t{1} << 20 : 0;
      const long faults = MinorFaults();
      const auto t0 = Clock::now();
      nlohmann::json result = RunChangeJob(job, *backend);
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      std::printf("round %d %-6s task %.3f s, %ld minor faults\n", round,
                  whole ? "whole" : "strips", seconds, MinorFaults() - faults);
      if (round > 1) {
        (whole ? whole_s : strips_s).push_back(seconds);
      }
      result.erase("timings_s");
      results[whole] = std::move(result);
    }
    same = same && results[0]["changed_pixels"] == results[1]["changed_pixels"] &&
           results[0]["regions"] == results[1]["regions"];
  }
  const double whole_median = bench::Median(whole_s);
  const double strips_median = bench::Median(strips_s);
  std::printf(
      "{\"size\":%d,\"rounds\":%d,\"whole_s\":%.4f,\"strips_s\":%.4f,\"whole_of_strips\":%.3f,"
      "\"same_results\":%s}\n",
      size, rounds, whole_median, strips_median, whole_median / strips_median,
      same ? "true" : "false");
  std::filesystem::remove_all(work_dir);
  return same ? 0 : 1;
}
