#include "worker/imagery/change_job.h"

#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>

#include "temp_dir.h"
#include "worker/imagery/change_outputs.h"
#include "worker/imagery/raster_io.h"
#include "worker/imagery/synthetic_pair.h"

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
  const std::string path = job.output_dir + "/expected_quicklook.png";
  WriteQuicklook(path, {pixels.data(), pixels.data() + plane, pixels.data() + 2 * plane}, grid,
                 mask.data(), width, height);
  return FileBytes(path);
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

}  // namespace
}  // namespace warmpool::imagery
