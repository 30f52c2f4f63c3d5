// Real-data smoke test: the two co-registered Landsat pairs shipped in Debian's r-cran-satellite
// package (imagery.md 7b). No network: the test reads a local copy named by
// WARMPOOL_SATELLITE_DATA, either the .deb (`apt-get download r-cran-satellite`, unpacked here with
// `dpkg -x`) or its unpacked usr/lib/R/site-library/satellite folder; without it the test
// reports Skipped.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <gdal_utils.h>

#include "tests/support/skip_test.h"
#include "tests/support/temp_dir.h"
#include "worker/tasks/change_detection_task.h"

namespace warmpool::imagery {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kDataVar = "WARMPOOL_SATELLITE_DATA";

// The package's satellite folder from WARMPOOL_SATELLITE_DATA (a .deb is unpacked once per
// process); skips the test case when the variable is unset or names nothing usable.
const std::string& SatelliteRoot() {
  static testing::TempDir dir;
  static const std::string root = []() -> std::string {
    const char* env = std::getenv(kDataVar);
    if (env == nullptr || *env == '\0') {
      return "";
    }
    const fs::path given(env);
    if (fs::is_directory(given / "extdata")) {
      return given.string();
    }
    if (given.extension() != ".deb" || !fs::is_regular_file(given)) {
      return "";
    }
    const std::string cmd =
        "dpkg -x '" + given.string() + "' '" + dir.path().string() + "/pkg' > /dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      return "";
    }
    return (dir.path() / "pkg/usr/lib/R/site-library/satellite").string();
  }();
  if (root.empty() || !fs::is_directory(fs::path(root) / "extdata")) {
    ::warmpool::testing::SkipTest(std::string(kDataVar) +
                                  " names no r-cran-satellite .deb or satellite folder");
  }
  return root;
}

// Stacks single-band files into one BGRN VRT. The task reads a VRT only when its sources are
// inside the data root, so copies next to `out` are stacked.
std::string Stack(const std::vector<std::string>& files, const std::string& out) {
  std::vector<std::string> local;
  for (const std::string& f : files) {
    local.push_back((fs::path(out).parent_path() / fs::path(f).filename()).string());
    fs::copy_file(f, local.back(), fs::copy_options::overwrite_existing);
  }
  std::vector<const char*> inputs;
  for (const std::string& f : local) {
    inputs.push_back(f.c_str());
  }
  const char* argv[] = {"-separate", nullptr};
  GDALBuildVRTOptions* opts = GDALBuildVRTOptionsNew(const_cast<char**>(argv), nullptr);
  int usage_error = 0;
  GDALDatasetH ds = GDALBuildVRT(out.c_str(), static_cast<int>(inputs.size()), nullptr,
                                 inputs.data(), opts, &usage_error);
  GDALBuildVRTOptionsFree(opts);
  REQUIRE(ds != nullptr);
  GDALClose(ds);
  return out;
}

void CheckResult(const Json& r, int width) {
  CHECK(r["width"] == width);
  CHECK(std::isfinite(r["threshold"]["value"].get<double>()));
  CHECK(r["threshold"]["value"].get<double>() > 0);
  const double fraction = r["changed_fraction"].get<double>();
  CHECK(fraction >= 0.0);
  CHECK(fraction < 0.6);
  CHECK(r["valid_pixels"].get<uint64_t>() > 0);
  CHECK(r["crs"].get<std::string>().rfind("EPSG:326", 0) == 0);  // UTM north
  for (const Json& g : r["normalization"]["gain"]) {
    CHECK(std::isfinite(g.get<double>()));
  }
  CHECK(fs::exists(r["outputs"]["mask"].get<std::string>()));
  CHECK(fs::exists(r["outputs"]["quicklook"].get<std::string>()));
}

TEST_CASE("Landsat 7 (2001) vs Landsat 8 (2013), WRS 195/025, 41x41", "[imagery][landsat]") {
  const std::string root = SatelliteRoot();
  GDALAllRegister();
  testing::TempDir work;
  const std::string ext = root + "/extdata/";
  const std::string l7 = ext + "LE07_L1TP_195025_20010730_20170204_01_T1_B";
  const std::string l8 = ext + "LC08_L1TP_195025_20130707_20170503_01_T1_B";
  // BGRN: L7 bands 1-4, L8 bands 2-5.
  const std::string before =
      Stack({l7 + "1.TIF", l7 + "2.TIF", l7 + "3.TIF", l7 + "4.TIF"}, work.Sub("l7.vrt"));
  const std::string after =
      Stack({l8 + "2.TIF", l8 + "3.TIF", l8 + "4.TIF", l8 + "5.TIF"}, work.Sub("l8.vrt"));
  ImageryConfig cfg;
  cfg.data_root = work.path().string();
  cfg.device = "cpu";
  for (const char* method : {"cva", "ndvi", "logratio"}) {
    DYNAMIC_SECTION(method) {
      const Json r = RunChangeDetectionTask(
          Json::array(),
          {{"before", before}, {"after", after}, {"method", method}, {"min_area_px", 4}}, cfg);
      CheckResult(r, 41);
      if (std::string(method) == "cva") {
        // L7 is 8-bit DN, L8 16-bit DN: the fitted gain maps L8 down by two orders of magnitude.
        for (const Json& g : r["normalization"]["gain"]) {
          CHECK(g.get<double>() < 0.05);
        }
      }
    }
  }
}

TEST_CASE("Landsat 5 (2000) vs Landsat 5 (2010), WRS 167/055, 101x101 uint8",
          "[imagery][landsat]") {
  const std::string root = SatelliteRoot();
  GDALAllRegister();
  testing::TempDir work;
  const std::string a = root + "/testdata/LT05/LT05_L1TP_167055_20000309_20161214_01_T1_B";
  const std::string b = root + "/testdata/LT5/LT51670552010352MLK00_B";
  const std::string before =
      Stack({a + "1.TIF", a + "2.TIF", a + "3.TIF", a + "4.TIF"}, work.Sub("2000.vrt"));
  const std::string after =
      Stack({b + "1.tif", b + "2.tif", b + "3.tif", b + "4.tif"}, work.Sub("2010.vrt"));
  ImageryConfig cfg;
  cfg.data_root = work.path().string();
  cfg.device = "cpu";
  const Json r = RunChangeDetectionTask(
      Json::array(), {{"before", before}, {"after", after}, {"threshold", "ki"}}, cfg);
  CheckResult(r, 101);
  CHECK(r["threshold"]["method"] == "kittler-illingworth");
}

}  // namespace
}  // namespace warmpool::imagery
