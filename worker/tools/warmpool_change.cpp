// warmpool-change: runs imagery.change_detection once from the command line (the same function
// the worker calls) and prints the result JSON; handy for demos and for memory checks.
//   warmpool-change --data-root /data '{"before": "/data/a.tif", "after": "/data/b.tif"}'
#include <iostream>
#include <sys/resource.h>

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "common/logging.h"
#include "worker/tasks/change_detection_task.h"
#include "worker/tasks/imagery_exceptions.h"

int main(int argc, char** argv) {
  warmpool::imagery::ImageryConfig cfg;
  std::string kwargs_text;
  CLI::App app{"warmpool-change: one imagery.change_detection call, result JSON on stdout"};
  app.add_option("kwargs", kwargs_text, "task keyword arguments as a JSON object")->required();
  app.add_option("--data-root", cfg.data_root, "inputs and outputs must be inside");
  app.add_option("--output-root", cfg.output_root, "default output parent");
  app.add_option("--device", cfg.device, "auto | cpu | cuda | cuda:N");
  // Bounded as the worker bounds its own (worker_options.cpp): a bad value is a usage error.
  app.add_option("--threads", cfg.threads, "CPU threads")->check(CLI::Range(1, 1024));
  app.add_option("--strip-rows", cfg.strip_rows, "rows per strip")->check(CLI::Range(1, 1 << 20));
  app.add_option("--decode-budget-mb", cfg.whole_decode_max_mb,
                 "pairs up to this many MiB decoded are decoded whole; 0 = strips")
      ->check(CLI::Range(size_t{0}, size_t{1} << 20));
  warmpool::AddVersionFlag(app, "warmpool-change");
  WARMPOOL_CLI_PARSE(app, argc, argv);
  warmpool::SetupLogging(warmpool::LogFormat::kText, spdlog::level::info, "warmpool-change");
  try {
    const nlohmann::json kwargs = nlohmann::json::parse(kwargs_text);
    nlohmann::json result =
        warmpool::imagery::RunChangeDetectionTask(nlohmann::json::array(), kwargs, cfg);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    result["peak_rss_mb"] = usage.ru_maxrss / 1024;
    if (result["regions"].size() > 5) {  // keep the console output short
      result["regions"] =
          std::vector<nlohmann::json>(result["regions"].begin(), result["regions"].begin() + 5);
    }
    std::cout << result.dump(2) << std::endl;
  } catch (const warmpool::imagery::ImageryError& e) {
    std::cerr << warmpool::worker::PythonExceptionFor(e) << ": " << e.what() << std::endl;
    return 1;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "kwargs must be a JSON object: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}
