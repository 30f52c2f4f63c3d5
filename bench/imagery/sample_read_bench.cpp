// sample_read_bench: the radiometric sample's decimated read (RasterReader::ReadDecimated)
// against GDAL's own whole-image nearest-neighbour RasterIO, which it replaced, on the same
// DEFLATE GeoTIFF in the same process, alternated round by round; a full-resolution read of the
// same file (strips of 256 rows, as the pipeline decodes) is the floor.
//
// Every read opens the file afresh, so no read finds another's blocks in GDAL's cache. GDAL is
// configured as RunChangeJob configures it (2 threads, 64 MB block cache). Both decimated reads
// must give the same pixels; the bench exits 1 when they differ.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <gdal.h>
#include <nlohmann/json.hpp>

#include "bench/imagery/bench_common.h"
#include "imagery/raster_io.h"

namespace {

using namespace warmpool::imagery;
using namespace warmpool::imagery::bench;
using Clock = std::chrono::steady_clock;

template <typename Fn>
double Seconds(Fn&& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The previous ReadDecimated: one GDAL RasterIO of the whole image into the small buffer.
void GdalDecimated(const std::string& path, const std::vector<int>& bands, int out_width,
                   int out_height, uint16_t* out) {
  GDALDatasetH ds = GDALOpen(path.c_str(), GA_ReadOnly);
  if (ds == nullptr ||
      GDALDatasetRasterIO(ds, GF_Read, 0, 0, GDALGetRasterXSize(ds), GDALGetRasterYSize(ds), out,
                          out_width, out_height, GDT_UInt16, static_cast<int>(bands.size()),
                          const_cast<int*>(bands.data()), 0, 0, 0) != CE_None) {
    std::fprintf(stderr, "GDAL cannot read %s: %s\n", path.c_str(), CPLGetLastErrorMsg());
    std::exit(2);
  }
  GDALClose(ds);
}

}  // namespace

int main(int argc, char** argv) {
  int size = 4096;
  int side = 1024;
  int rounds = 5;
  std::string work_dir =
      (std::filesystem::temp_directory_path() / "warmpool-sample-read-bench").string();
  CLI::App app{"sample_read_bench: ReadDecimated vs GDAL's decimated RasterIO"};
  app.add_option("--size", size, "image side in pixels (4-band uint16, DEFLATE, tiled 256)")
      ->check(CLI::Range(64, 32768));
  app.add_option("--side", side, "sample side (ComputeChange's default: 1024)")
      ->check(CLI::Range(16, 32768));
  app.add_option("--rounds", rounds, "rounds (median of)")->check(CLI::PositiveNumber);
  app.add_option("--work-dir", work_dir, "where the GeoTIFF is written");
  CLI11_PARSE(app, argc, argv);
  ConfigureGdal(2, 64);

  const std::string path = WriteSyntheticPair(BenchPair(size), work_dir, "sample", true)["after"];
  const std::vector<int> bands = {1, 2, 3, 4};
  const int out = std::min(size, side);
  std::vector<uint16_t> ours(static_cast<size_t>(out) * out * bands.size());
  std::vector<uint16_t> gdal(ours.size());
  std::vector<uint16_t> strip(static_cast<size_t>(size) * 256 * bands.size());

  std::vector<double> ours_s, gdal_s, full_s;
  for (int r = 0; r < rounds; ++r) {
    const auto read_ours = [&] {
      ours_s.push_back(
          Seconds([&] { RasterReader::Open(path).ReadDecimated(bands, out, out, ours.data()); }));
    };
    const auto read_gdal = [&] {
      gdal_s.push_back(Seconds([&] { GdalDecimated(path, bands, out, out, gdal.data()); }));
    };
    if (r % 2 == 0) {
      read_ours();
      read_gdal();
    } else {
      read_gdal();
      read_ours();
    }
    full_s.push_back(Seconds([&] {
      const RasterReader reader = RasterReader::Open(path);
      for (int row = 0; row < size; row += 256) {
        reader.ReadStrip(bands, row, std::min(256, size - row), strip.data());
      }
    }));
  }
  const bool same = ours == gdal;
  const nlohmann::ordered_json report = {
      {"size", size},
      {"sample_side", out},
      {"rounds", rounds},
      {"read_decimated_s", Median(ours_s)},
      {"gdal_decimated_s", Median(gdal_s)},
      {"full_read_s", Median(full_s)},
      {"read_decimated_of_gdal", Median(ours_s) / Median(gdal_s)},
      {"read_decimated_of_full_read", Median(ours_s) / Median(full_s)},
      {"same_pixels", same},
  };
  std::printf("%s\n", report.dump().c_str());
  std::filesystem::remove_all(work_dir);
  return same ? 0 : 1;
}
