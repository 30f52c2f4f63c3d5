#pragma once

// Host wall-clock timing of a repeated step, for the CUDA kernel benchmark and gpu-check's
// gpu_bench (header only, no dependency beyond the standard library: gpu-check includes it).

#include <chrono>
#include <functional>

namespace warmpool::imagery::bench {

// Mean wall-clock ms per run of `repeats` runs after one warm-up; `run` synchronises itself.
inline double WallMs(int repeats, const std::function<void()>& run) {
  run();
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    run();
  }
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - t0;
  return elapsed.count() / repeats;
}

}  // namespace warmpool::imagery::bench
