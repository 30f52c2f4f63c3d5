// warmpool-quality: runs the synthetic quality suite and writes the Markdown report
// (docs/QUALITY.md when run by scripts/quality-report.sh).
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "imagery/testing/quality_suite.h"

int main(int argc, char** argv) {
  std::string out;
  int size = 512;
  int seeds = 3;
  std::string command = "scripts/quality-report.sh";
  CLI::App app{"warmpool-quality: precision/recall/F1/IoU per method on synthetic pairs"};
  app.add_option("--out", out, "write the Markdown here (default: stdout)");
  app.add_option("--size", size, "pair size in pixels")->check(CLI::Range(64, 8192));
  app.add_option("--seeds", seeds, "pairs per scenario")->check(CLI::Range(1, 100));
  app.add_option("--command", command, "command line quoted in the report");
  warmpool::AddVersionFlag(app, "warmpool-quality");
  WARMPOOL_CLI_PARSE(app, argc, argv);
  using namespace warmpool::imagery;
  const auto rows = RunQualitySuite(DefaultScenarios(size), DefaultConfigs(), seeds);
  const std::string md = QualityMarkdown(rows, command, size, seeds);
  if (out.empty()) {
    std::cout << md;
  } else {
    std::ofstream f(out);
    f << md;
    if (!f) {
      std::cerr << "warmpool-quality: cannot write " << out << std::endl;
      return 1;
    }
    std::cout << "wrote " << out << std::endl;
  }
  return 0;
}
