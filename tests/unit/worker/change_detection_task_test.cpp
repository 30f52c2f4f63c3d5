#include "worker/tasks/change_detection_task.h"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <gdal.h>
#include <ogr_srs_api.h>

#include "imagery/cuda/gpu_backend.h"
#include "imagery/testing/synthetic_pair.h"
#include "tests/support/temp_dir.h"
#include "worker/tasks/imagery_exceptions.h"

namespace warmpool::imagery {
namespace {

using Json = nlohmann::json;

// A data root with a small synthetic pair written as GeoTIFFs.
struct Fixture {
  testing::TempDir dir;
  ImageryConfig config;
  Json files;

  Fixture() {
    SynthOptions s;
    s.width = 128;
    s.height = 96;
    s.object_count = 8;
    s.max_object_side = 24;
    files = WriteSyntheticPair(GenerateSyntheticPair(s), dir.Sub("data"), "pair");
    config.data_root = dir.Sub("data");
    config.device = "cpu";
  }
  std::string before() const { return files["before"]; }
  std::string after() const { return files["after"]; }
};

// Runs the task and returns the exc_type it failed with ("" on success).
std::string ExcType(const Json& args, const Json& kwargs, const ImageryConfig& config) {
  try {
    RunChangeDetectionTask(args, kwargs, config);
  } catch (const ImageryError& e) {
    INFO(e.what());
    return warmpool::worker::PythonExceptionFor(e);
  }
  return "";
}

TEST_CASE("The task writes georeferenced products and a complete result", "[imagery][task]") {
  Fixture f;
  const Json result = RunChangeDetectionTask(
      Json::array(), {{"before", f.before()}, {"after", f.after()}, {"magnitude", true}}, f.config);
  CHECK(result["method"] == "irmad");  // no method named, 4 bands: chosen from the data
  CHECK(result["selected_by_data"] == true);
  CHECK(result["device"] == "cpu");
  CHECK(result["threshold"]["method"] == "kittler-illingworth");
  CHECK(result["threshold"]["value"].get<double>() > 0);
  CHECK(result["changed_pixels"].get<uint64_t>() > 0);
  CHECK(result["changed_fraction"].get<double>() > 0.0);
  CHECK(result["changed_fraction"].get<double>() < 0.5);
  CHECK(result["region_count"].get<size_t>() == result["regions"].size());
  CHECK(result["crs"] == "EPSG:32633");
  CHECK(result["decoded_whole"] == true);  // 128x96x4: far under the default budget
  for (const char* stage :
       {"decode", "fused_pass", "threshold", "mask_filter", "encode", "total"}) {
    CHECK(result["timings_s"].contains(stage));
  }
  const Json& region = result["regions"][0];
  CHECK(region["area_map"].get<double>() == Approx(region["area_px"].get<double>() * 4.77 * 4.77));
  // Map bbox of pixel bbox: x = 500000 + px * 4.77.
  CHECK(region["map_bbox"][0].get<double>() ==
        Approx(500000.0 + region["pixel_bbox"][0].get<double>() * 4.77));
  const std::string out_dir = f.dir.Sub("data") + "/changes/pair_before__pair_after_auto";
  CHECK(result["outputs"]["mask"] == out_dir + "/change_mask.tif");

  // Mask: uint8, geotransform + CRS of before, tiled and DEFLATE-compressed, nodata 255.
  GDALAllRegister();
  GDALDatasetH mask = GDALOpen(result["outputs"]["mask"].get<std::string>().c_str(), GA_ReadOnly);
  REQUIRE(mask != nullptr);
  double gt[6];
  REQUIRE(GDALGetGeoTransform(mask, gt) == CE_None);
  CHECK(gt[0] == 500000.0);
  CHECK(gt[1] == 4.77);
  CHECK(std::string(GDALGetProjectionRef(mask)).find("32633") != std::string::npos);
  GDALRasterBandH band = GDALGetRasterBand(mask, 1);
  CHECK(GDALGetRasterDataType(band) == GDT_Byte);
  int bx = 0, by = 0;
  GDALGetBlockSize(band, &bx, &by);
  CHECK(bx == 256);
  CHECK(std::string(GDALGetMetadataItem(mask, "COMPRESSION", "IMAGE_STRUCTURE")) == "DEFLATE");
  int has_nodata = 0;
  CHECK(GDALGetRasterNoDataValue(band, &has_nodata) == 255.0);
  std::vector<uint8_t> pixels(128 * 96);
  REQUIRE(GDALRasterIO(band, GF_Read, 0, 0, 128, 96, pixels.data(), 128, 96, GDT_Byte, 0, 0) ==
          CE_None);
  uint64_t ones = 0;
  for (uint8_t p : pixels) {
    ones += p == 1;
  }
  CHECK(ones == result["changed_pixels"].get<uint64_t>());
  GDALClose(mask);

  // GeoJSON: one polygon per region; PNG signature; result JSON on disk equals the return value.
  std::ifstream gj(result["outputs"]["regions_geojson"].get<std::string>());
  const Json geojson = Json::parse(gj);
  CHECK(geojson["type"] == "FeatureCollection");
  CHECK(geojson["features"].size() == result["region_count"].get<size_t>());
  CHECK(geojson["features"][0]["geometry"]["type"] == "Polygon");
  std::ifstream png(result["outputs"]["quicklook"].get<std::string>(), std::ios::binary);
  char sig[8] = {};
  png.read(sig, 8);
  CHECK(std::string(sig + 1, 3) == "PNG");
  CHECK(std::filesystem::exists(result["outputs"]["magnitude"].get<std::string>()));
  std::ifstream rj(result["outputs"]["result_json"].get<std::string>());
  CHECK(Json::parse(rj)["changed_pixels"] == result["changed_pixels"]);
}

TEST_CASE("Positional arguments bind as in Python", "[imagery][task]") {
  Fixture f;
  const Json result = RunChangeDetectionTask({f.before(), f.after(), f.dir.Sub("data/out"),
                                              "absdiff", Json(), "histogram", 250.0, 0, 0, false},
                                             Json::object(), f.config);
  CHECK(result["method"] == "absdiff");
  CHECK(result["normalize"] == "histogram");
  CHECK(result["threshold"]["method"] == "fixed");
  CHECK(result["morphology"]["open_radius"] == 0);
  CHECK_FALSE(result["outputs"].contains("quicklook"));
  CHECK(result["outputs"]["mask"] == f.dir.Sub("data/out") + "/change_mask.tif");
}

TEST_CASE("Wrong argument types are TypeError, bad values ValueError", "[imagery][task]") {
  Fixture f;
  const Json ok = {{"before", f.before()}, {"after", f.after()}};
  const auto with = [&](const char* key, Json value) {
    Json k = ok;
    k[key] = std::move(value);
    return k;
  };
  // clang-format off
  CHECK(ExcType(Json::array(), with("before", 5), f.config)              == "TypeError");
  CHECK(ExcType(Json::array(), with("open_radius", "1"), f.config)       == "TypeError");
  CHECK(ExcType(Json::array(), with("open_radius", 1.5), f.config)       == "TypeError");
  CHECK(ExcType(Json::array(), with("bands", "1,2"), f.config)           == "TypeError");
  CHECK(ExcType(Json::array(), with("bands", {1, "2"}), f.config)        == "TypeError");
  CHECK(ExcType(Json::array(), with("quicklook", 1), f.config)           == "TypeError");
  CHECK(ExcType(Json::array(), with("threshold", true), f.config)        == "TypeError");
  CHECK(ExcType(Json::array(), with("colour", "red"), f.config)          == "TypeError");
  CHECK(ExcType(Json::array(), {{"before", f.before()}}, f.config)       == "TypeError");
  CHECK(ExcType({f.before()}, {{"before", f.before()}}, f.config)        == "TypeError");
  CHECK(ExcType(Json::array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), Json::object(), f.config)
                                                                         == "TypeError");
  CHECK(ExcType("notalist", Json::object(), f.config)                    == "TypeError");
  CHECK(ExcType(Json::array(), with("method", "pca"), f.config)          == "ValueError");
  CHECK(ExcType(Json::array(), with("normalize", "irmad"), f.config)     == "ValueError");
  CHECK(ExcType(Json::array(), with("threshold", "triangle"), f.config)  == "ValueError");
  CHECK(ExcType(Json::array(), with("threshold", -1.0), f.config)        == "ValueError");
  CHECK(ExcType(Json::array(), with("open_radius", -1), f.config)        == "ValueError");
  CHECK(ExcType(Json::array(), with("min_area_px", -5), f.config)        == "ValueError");
  CHECK(ExcType(Json::array(), with("bands", Json::array()), f.config)   == "ValueError");
  CHECK(ExcType(Json::array(), with("bands", {1, 9}), f.config)          == "ValueError");
  CHECK(ExcType(Json::array(), with("smooth_radius", 9), f.config)       == "ValueError");
  CHECK(ExcType(Json::array(), with("median_floor", -1.0), f.config)     == "ValueError");
  CHECK(ExcType(Json::array(), with("median_floor", "3"), f.config)      == "TypeError");
  Json irmad_pif = with("method", "irmad");
  irmad_pif["normalize"] = "pif";  // IR-MAD fits its own projections
  CHECK(ExcType(Json::array(), irmad_pif, f.config)                      == "ValueError");
  Json irmad_none = with("method", "irmad");
  irmad_none["normalize"] = nullptr;
  CHECK(ExcType(Json::array(), irmad_none, f.config)                     == "");
  CHECK(ExcType(Json::array(), with("method", "irmad"), f.config)        == "");
  for (const char* t : {"em", "ki", "otsu"}) {
    CHECK(ExcType(Json::array(), with("threshold", t), f.config)         == "");
  }
  CHECK(ExcType(Json::array(), with("normalize", "standardize"), f.config) == "ValueError");
  Json cva_standardize = with("normalize", "standardize");  // auto picks IR-MAD for 4 bands
  cva_standardize["method"] = "cva";
  CHECK(ExcType(Json::array(), cva_standardize, f.config)                == "");
  Json ndvi_without_nir = with("bands", {1, 2});
  ndvi_without_nir["method"] = "ndvi";
  CHECK(ExcType(Json::array(), ndvi_without_nir, f.config)               == "ValueError");
  CHECK(ExcType(Json::array(), ok, f.config)                             == "");
  // clang-format on
}

TEST_CASE("Bad inputs fail with the right exception type", "[imagery][task]") {
  Fixture f;
  const std::string root = f.config.data_root;
  SECTION("missing file") {
    CHECK(ExcType(Json::array(), {{"before", root + "/nope.tif"}, {"after", f.after()}},
                  f.config) == "FileNotFoundError");
  }
  SECTION("outside the data root (input and output_dir)") {
    CHECK(ExcType(Json::array(), {{"before", "/etc/passwd"}, {"after", f.after()}}, f.config) ==
          "PermissionError");
    CHECK(ExcType(Json::array(),
                  {{"before", f.before()}, {"after", f.after()}, {"output_dir", "/tmp/escape"}},
                  f.config) == "PermissionError");
  }
  SECTION("corrupt and truncated files") {
    std::ofstream(root + "/garbage.tif") << "this is not a TIFF at all";
    CHECK(ExcType(Json::array(), {{"before", root + "/garbage.tif"}, {"after", f.after()}},
                  f.config) == "ValueError");
    const auto size = std::filesystem::file_size(f.after());
    std::filesystem::copy_file(f.after(), root + "/cut.tif");
    std::filesystem::resize_file(root + "/cut.tif", size / 2);
    CHECK(ExcType(Json::array(), {{"before", f.before()}, {"after", root + "/cut.tif"}},
                  f.config) == "ValueError");
  }
  SECTION("size mismatch") {
    SynthOptions s;
    s.width = 64;
    s.height = 64;
    const Json other = WriteSyntheticPair(GenerateSyntheticPair(s), root, "small");
    try {
      RunChangeDetectionTask(Json::array(), {{"before", f.before()}, {"after", other["after"]}},
                             f.config);
      FAIL("no exception");
    } catch (const ImageryError& e) {
      CHECK(e.kind() == ImageryError::Kind::kMismatch);
      CHECK(std::string(warmpool::worker::PythonExceptionFor(e)) == "ValueError");
      CHECK(std::string(e.what()).find("128x96") != std::string::npos);
    }
  }
  SECTION("CRS mismatch") {
    std::filesystem::copy_file(f.after(), root + "/wgs84.tif");
    GDALAllRegister();
    GDALDatasetH ds = GDALOpen((root + "/wgs84.tif").c_str(), GA_Update);
    REQUIRE(ds != nullptr);
    OGRSpatialReferenceH srs = OSRNewSpatialReference(nullptr);
    OSRImportFromEPSG(srs, 32634);
    GDALSetSpatialRef(ds, srs);
    OSRDestroySpatialReference(srs);
    GDALClose(ds);
    try {
      RunChangeDetectionTask(Json::array(),
                             {{"before", f.before()}, {"after", root + "/wgs84.tif"}}, f.config);
      FAIL("no exception");
    } catch (const ImageryError& e) {
      CHECK(e.kind() == ImageryError::Kind::kMismatch);
      CHECK(std::string(e.what()).find("CRS") != std::string::npos);
    }
  }
  SECTION("device") {
    CHECK_THROWS_AS(ValidateDeviceSpec("gpu"), ImageryError);
    CHECK_NOTHROW(ValidateDeviceSpec("cuda:1"));
    if (CudaDeviceCount() == 0) {
      ImageryConfig cuda = f.config;
      cuda.device = "cuda:0";
      CHECK(ExcType(Json::array(), {{"before", f.before()}, {"after", f.after()}}, cuda) ==
            "RuntimeError");
      cuda.device = "auto";  // falls back to the CPU
      CHECK(RunChangeDetectionTask(Json::array(), {{"before", f.before()}, {"after", f.after()}},
                                   cuda)["device"] == "cpu");
    } else {  // with a GPU the same requests run on it (this branch must not be a silent no-op)
      ImageryConfig cuda = f.config;
      cuda.device = "cuda:0";
      const Json r = RunChangeDetectionTask(Json::array(),
                                            {{"before", f.before()}, {"after", f.after()}}, cuda);
      CHECK(r["device"].get<std::string>().rfind("cuda:0", 0) == 0);
    }
  }
}

}  // namespace
}  // namespace warmpool::imagery
