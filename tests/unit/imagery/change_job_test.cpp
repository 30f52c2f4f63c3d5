#include "imagery/change_job.h"

#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>

#include "imagery/change_outputs.h"
#include "imagery/raster_io.h"
#include "imagery/testing/synthetic_pair.h"
#include "tests/support/temp_dir.h"

namespace warmpool::imagery {
namespace {

std::string FileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The quick-look written from a fresh decimated read of `after`, with the job's own mask: what
// the job wrote before it reused the fit's sample.
std::string QuicklookFromFile(const ChangeJob& job, const nlohmann::json& result) {
  const RasterReader after = RasterReader::Open(job.after_path);
  const RasterReader mask_file = RasterReader::Open(result["outputs"]["mask"]);
  const int width = after.info().width;
  const int height = after.info().height;
  std::vector<uint16_t> mask16(static_cast<size_t>(width) * height);
  mask_file.ReadStrip({1}, 0, height, mask16.data());
  const std::vector<uint8_t> mask(mask16.begin(), mask16.end());

  const QuicklookGrid grid = QuicklookSize(width, height, job.quicklook_max_side);
  const size_t plane = static_cast<size_t>(grid.width) * grid.height;
  const std::vector<int> rgb = {3, 2, 1};
  std::vector<uint16_t> pixels(plane * rgb.size());
  after.ReadDecimated(rgb, grid.width, grid.height, pixels.data());
  return EncodeQuicklook({pixels.data(), pixels.data() + plane, pixels.data() + 2 * plane}, grid,
                         mask.data(), width, height);
}

TEST_CASE("The quick-look is the same whether it reuses the fit's sample or reads after again",
          "[imagery][job]") {
  struct Case {
    int width, height, sample_side, max_side;
    Normalization normalization;
    std::vector<int> bands;
  };
  // Grids equal (full size, or both decimated to 64x64): the sample is reused, including under
  // histogram matching, whose LUTs must not reach the picture. Grids that differ (96 rows give a
  // 64x48 quick-look) or a red band outside `bands` read `after` again.
  const Case cases[] = {
      {128, 128, 1024, 1024, Normalization::kPif, {}},
      {128, 128, 64, 64, Normalization::kPif, {}},
      {128, 128, 64, 64, Normalization::kHistogram, {}},
      {128, 128, 64, 64, Normalization::kPif, {4, 3, 2, 1}},
      {128, 96, 64, 64, Normalization::kPif, {}},
      {128, 128, 64, 64, Normalization::kPif, {1, 2, 4}},
  };
  testing::TempDir dir;
  int n = 0;
  for (const Case& c : cases) {
    SynthOptions s;
    s.width = c.width;
    s.height = c.height;
    s.object_count = 6;
    s.max_object_side = 24;
    s.seed = 11 + n;
    const std::string data = dir.Sub("case" + std::to_string(n++));
    const nlohmann::json files = WriteSyntheticPair(GenerateSyntheticPair(s), data, "pair");
    ChangeJob job;
    job.before_path = files["before"];
    job.after_path = files["after"];
    job.output_dir = data + "/out";
    job.options.sample_side = c.sample_side;
    job.options.normalization = c.normalization;
    job.options.bands = c.bands.empty() ? std::vector<int>{1, 2, 3, 4} : c.bands;
    job.quicklook_max_side = c.max_side;
    ComputeBackendPtr backend = MakeCpuBackend(2);
    const nlohmann::json result = RunChangeJob(job, *backend);
    INFO("case " << n << ": " << c.width << "x" << c.height << ", sample " << c.sample_side
                 << ", quick-look " << c.max_side);
    REQUIRE(result["changed_pixels"].get<uint64_t>() > 0);
    const std::string written = FileBytes(result["outputs"]["quicklook"]);
    REQUIRE(written.size() > 100);
    CHECK(written == QuicklookFromFile(job, result));
  }
}

TEST_CASE("A pair decoded whole gives the products it gives read in strips", "[imagery][job]") {
  testing::TempDir dir;
  SynthOptions s;
  s.width = 300;
  s.height = 200;
  s.object_count = 10;
  s.max_object_side = 30;
  s.nodata_border_px = 20;
  const nlohmann::json files = WriteSyntheticPair(GenerateSyntheticPair(s), dir.Sub("d"), "pair");
  nlohmann::json results[2];
  for (const size_t budget : {size_t{0}, size_t{384}}) {
    ChangeJob job;
    job.before_path = files["before"];
    job.after_path = files["after"];
    job.output_dir = dir.Sub("out" + std::to_string(budget));
    job.options.sample_side = 128;  // decimated: the sample comes from memory, not GDAL
    job.quicklook_max_side = 150;   // a grid of its own: the quick-look reads `after` again
    job.write_magnitude = true;
    job.whole_decode_max_mb = budget;
    ComputeBackendPtr backend = MakeCpuBackend(2);
    results[budget == 0 ? 0 : 1] = RunChangeJob(job, *backend);
  }
  const nlohmann::json& strips = results[0];
  const nlohmann::json& whole = results[1];
  CHECK_FALSE(strips["decoded_whole"].get<bool>());
  CHECK(whole["decoded_whole"].get<bool>());
  CHECK(whole["timings_s"]["decode_whole"].get<double>() > 0);
  REQUIRE(strips["changed_pixels"].get<uint64_t>() > 0);
  for (const char* key : {"changed_pixels", "valid_pixels", "threshold", "normalization", "regions",
                          "direction_sectors"}) {
    INFO(key);
    CHECK(whole[key] == strips[key]);
  }
  for (const char* output : {"mask", "magnitude", "quicklook", "regions_geojson"}) {
    INFO(output);
    CHECK(FileBytes(whole["outputs"][output]) == FileBytes(strips["outputs"][output]));
  }
}

}  // namespace
}  // namespace warmpool::imagery
