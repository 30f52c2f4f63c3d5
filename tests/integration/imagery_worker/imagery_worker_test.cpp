// The change-detection task called from Python Celery 5.2.6 through a real warmpool-worker.
#include <filesystem>

#include <catch2/catch.hpp>

#include "tests/integration/worker/worker_fixture.h"

namespace warmpool::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string SynthBinary() {
  return std::string(WARMPOOL_BINARY_DIR) + "/worker/imagery/warmpool-synth";
}

TEST_CASE("imagery.change_detection from Python Celery: result, outputs, clear failures",
          "[imagery][integration]") {
  WorkerFixture fx;
  const std::string root = fx.dir + "/data";
  std::filesystem::create_directories(root);
  auto synth = RunCommand({SynthBinary(), "--out-dir", root + "/pair", "--width", "256", "--height",
                           "256", "--seed", "11"},
                          60s);
  REQUIRE(synth.exit_code == 0);
  auto worker = fx.StartWorker({"-Q", "gpu", "--data-root", root, "--device", "cpu",
                                "--imagery-threads", "3", "--imagery-decode-budget-mb", "0"});
  const std::string before = root + "/pair/synth_before.tif";
  const std::string after = root + "/pair/synth_after.tif";

  SECTION("a synthetic pair gives changes, a GeoTIFF mask and a quick-look") {
    json r = fx.Client(
        {"call", "imagery.change_detection", "--queue", "gpu", "--kwargs",
         json({{"before", before}, {"after", after}, {"output_dir", root + "/out"}}).dump(),
         "--timeout", "120"},
        150s);
    REQUIRE(r["status"] == "SUCCESS");
    const json& res = r["result"];
    CHECK(res["device"] == "cpu");
    CHECK(res["method"] == "cva");
    CHECK(res["decoded_whole"] == false);  // --imagery-decode-budget-mb 0: read in strips
    CHECK(res["changed_pixels"].get<long>() > 0);
    CHECK(res["changed_fraction"].get<double>() < 0.5);
    CHECK(res["region_count"].get<long>() > 0);
    CHECK(std::filesystem::exists(res["outputs"]["mask"].get<std::string>()));
    CHECK(std::filesystem::exists(res["outputs"]["quicklook"].get<std::string>()));
    CHECK(std::filesystem::exists(res["outputs"]["regions_geojson"].get<std::string>()));
    CHECK_THAT(worker->Log(), Catch::Contains("imagery_threads") && Catch::Contains("threads=3"));
  }
  SECTION("identical images: no change") {
    json r = fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--args",
                        json::array({before, before}).dump(), "--timeout", "120"},
                       150s);
    REQUIRE(r["status"] == "SUCCESS");
    CHECK(r["result"]["changed_pixels"] == 0);
  }
  SECTION("bad inputs fail with the right Python class and the worker keeps serving") {
    json outside = fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--args",
                              json::array({"/etc/hostname", after}).dump()});
    CHECK(outside["status"] == "FAILURE");
    CHECK(outside["exc_type"] == "PermissionError");
    json missing = fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--args",
                              json::array({root + "/nope.tif", after}).dump()});
    CHECK(missing["status"] == "FAILURE");
    CHECK(missing["exc_type"] == "FileNotFoundError");
    json wrong =
        fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--kwargs",
                   json({{"before", before}, {"after", after}, {"method", "magic"}}).dump()});
    CHECK(wrong["status"] == "FAILURE");
    CHECK(wrong["exc_type"] == "ValueError");
    json ping = fx.Client({"call", "warmpool.ping", "--queue", "gpu"});
    CHECK(ping["status"] == "SUCCESS");
  }
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(30s) == 0);
}

}  // namespace
}  // namespace warmpool::testing
