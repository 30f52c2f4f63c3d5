#pragma once

// The synthetic quality suite behind docs/QUALITY.md: every method configuration and the plain
// baseline on seeded synthetic pairs, scored against the exact ground truth.

#include <cstdint>
#include <string>
#include <vector>

#include "imagery/change_detection.h"
#include "imagery/testing/quality_metrics.h"
#include "imagery/testing/synthetic_pair.h"

namespace warmpool::imagery {

// The row of the task's default (method chosen from the data; method_selection.h).
inline constexpr const char* kDefaultConfigName = "default: auto (16-bit: irmad + ki)";

struct QualityScenario {
  std::string name;  // "gain/offset + noise", "1-px misregistration", "identical"
  SynthOptions synth;
};

struct QualityConfig {
  std::string name;  // e.g. "cva + pif + otsu + open1 + mmu16" or "baseline"
  ChangeOptions options;
};

struct QualityRow {
  std::string scenario;
  std::string config;
  Confusion confusion;  // summed over seeds
  uint64_t changed_pixels = 0;
  double seconds = 0;
};

// The scenarios at `size` x `size` px.
std::vector<QualityScenario> DefaultScenarios(int size);

// The configurations: each method with PIF + Otsu + opening + MMU, CVA variants (KI, histogram
// matching) and the plain baseline (absdiff, fixed threshold, no normalisation, no morphology).
std::vector<QualityConfig> DefaultConfigs();

// Runs every configuration on every scenario for seeds 1..seeds (CPU backend, 2 threads).
std::vector<QualityRow> RunQualitySuite(const std::vector<QualityScenario>& scenarios,
                                        const std::vector<QualityConfig>& configs, int seeds);

// The Markdown report, with `command` as the way to regenerate it.
std::string QualityMarkdown(const std::vector<QualityRow>& rows, const std::string& command,
                            int size, int seeds);

}  // namespace warmpool::imagery
