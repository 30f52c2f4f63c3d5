#include "imagery/raster_io.h"

#include <atomic>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <cpl_conv.h>
#include <cpl_error.h>
#include <gdal.h>

#include "imagery/strip_source.h"
#include "tests/support/temp_dir.h"

namespace warmpool::imagery {
namespace {

// A width x height raster of `bands` uint16 bands with distinct values per pixel and band,
// written by GDAL with `options` (tiled or striped, compressed or not).
PlanarImage WriteTestRaster(const std::string& path, int width, int height, int bands,
                            std::vector<const char*> options) {
  PlanarImage image{width, height, bands, {}};
  image.pixels.resize(static_cast<size_t>(width) * height * bands);
  for (size_t i = 0; i < image.pixels.size(); ++i) {
    image.pixels[i] = static_cast<uint16_t>((i * 2654435761u) >> 7);
  }
  GDALAllRegister();
  options.push_back(nullptr);
  GDALDatasetH ds = GDALCreate(GDALGetDriverByName("GTiff"), path.c_str(), width, height, bands,
                               GDT_UInt16, const_cast<char**>(options.data()));
  REQUIRE(ds != nullptr);
  REQUIRE(GDALDatasetRasterIO(ds, GF_Write, 0, 0, width, height, image.pixels.data(), width, height,
                              GDT_UInt16, bands, nullptr, 0, 0, 0) == CE_None);
  GDALClose(ds);
  return image;
}

// GDAL's own nearest-neighbour decimation of the whole raster (the reference).
std::vector<uint16_t> GdalDecimated(const std::string& path, std::vector<int> bands, int out_width,
                                    int out_height) {
  std::vector<uint16_t> out(static_cast<size_t>(out_width) * out_height * bands.size());
  // One thread: GDAL 3.6's multi-threaded reader fails on band-interleaved files (see below).
  const char* const single_thread[] = {"NUM_THREADS=1", nullptr};
  GDALDatasetH ds =
      GDALOpenEx(path.c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY, nullptr, single_thread, nullptr);
  REQUIRE(ds != nullptr);
  REQUIRE(GDALDatasetRasterIO(ds, GF_Read, 0, 0, GDALGetRasterXSize(ds), GDALGetRasterYSize(ds),
                              out.data(), out_width, out_height, GDT_UInt16,
                              static_cast<int>(bands.size()), bands.data(), 0, 0, 0) == CE_None);
  GDALClose(ds);
  return out;
}

std::vector<uint16_t> OurDecimated(const std::string& path, const std::vector<int>& bands,
                                   int out_width, int out_height) {
  std::vector<uint16_t> out(static_cast<size_t>(out_width) * out_height * bands.size());
  RasterReader::Open(path).ReadDecimated(bands, out_width, out_height, out.data());
  return out;
}

}  // namespace

TEST_CASE("NearestSourceIndex takes the source pixel under each output pixel's centre",
          "[imagery][raster]") {
  for (int i = 0; i < 7; ++i) {
    CHECK(NearestSourceIndex(i, 7, 7) == i);
  }
  CHECK(NearestSourceIndex(0, 4096, 1024) == 2);
  CHECK(NearestSourceIndex(1023, 4096, 1024) == 4094);
  CHECK(NearestSourceIndex(0, 5, 2) == 1);  // centre 0.5 * 2.5 = 1.25
  CHECK(NearestSourceIndex(1, 5, 2) == 3);  // 1.5 * 2.5 = 3.75
  CHECK(NearestSourceIndex(0, 1, 1) == 0);
}

TEST_CASE("A decimated read gives GDAL's nearest-neighbour pixels on every layout",
          "[imagery][raster]") {
  testing::TempDir dir;
  struct Layout {
    const char* name;
    std::vector<const char*> options;
  };
  const std::vector<Layout> layouts = {
      {"tiled-deflate-pixel",
       {"TILED=YES", "BLOCKXSIZE=256", "BLOCKYSIZE=256", "COMPRESS=DEFLATE", "INTERLEAVE=PIXEL"}},
      {"tiled-band", {"TILED=YES", "BLOCKXSIZE=128", "BLOCKYSIZE=128", "INTERLEAVE=BAND"}},
      {"striped-8-rows", {"BLOCKYSIZE=8", "COMPRESS=LZW"}},
      {"one-strip", {"BLOCKYSIZE=100000"}},
  };
  struct Size {
    int width, height, out_width, out_height;
  };
  const std::vector<Size> sizes = {
      {700, 530, 256, 200}, {1000, 777, 333, 250}, {300, 900, 300, 128}, {513, 257, 512, 256}};
  for (const Layout& layout : layouts) {
    for (const Size& s : sizes) {
      const std::string path = dir.Sub(std::string(layout.name) + "-" + std::to_string(s.width) +
                                       "x" + std::to_string(s.height) + ".tif");
      WriteTestRaster(path, s.width, s.height, 4, layout.options);
      for (const std::vector<int>& bands : {std::vector<int>{1, 2, 3, 4}, {4, 2}}) {
        INFO(layout.name << " " << s.width << "x" << s.height << " -> " << s.out_width << "x"
                         << s.out_height << ", " << bands.size() << " bands");
        CHECK(OurDecimated(path, bands, s.out_width, s.out_height) ==
              GdalDecimated(path, bands, s.out_width, s.out_height));
      }
    }
  }
}

TEST_CASE("A decimated read of a raster with overviews takes GDAL's overview pixels",
          "[imagery][raster]") {
  testing::TempDir dir;
  const std::string path = dir.Sub("with-overviews.tif");
  const PlanarImage image = WriteTestRaster(path, 512, 512, 2, {"TILED=YES"});
  GDALDatasetH ds = GDALOpen(path.c_str(), GA_Update);
  REQUIRE(ds != nullptr);
  int level = 2;
  REQUIRE(GDALBuildOverviews(ds, "AVERAGE", 1, &level, 0, nullptr, nullptr, nullptr) == CE_None);
  GDALClose(ds);
  const std::vector<int> bands = {1, 2};
  const std::vector<uint16_t> ours = OurDecimated(path, bands, 256, 256);
  CHECK(ours == GdalDecimated(path, bands, 256, 256));
  // ... which are averages, not the full-resolution pixels a read without overviews picks.
  std::vector<uint16_t> full_resolution(ours.size());
  MemoryStripSource(image, 0).ReadSample(256, 256, full_resolution.data());
  CHECK(ours != full_resolution);
}

TEST_CASE("A GeoTIFF and the same image in memory give the same sample", "[imagery][raster]") {
  testing::TempDir dir;
  const std::string path = dir.Sub("sample.tif");
  const PlanarImage image =
      WriteTestRaster(path, 777, 391, 3, {"TILED=YES", "BLOCKXSIZE=64", "BLOCKYSIZE=64"});
  const RasterReader reader = RasterReader::Open(path);
  GdalStripSource file(reader, {1, 2, 3});
  MemoryStripSource memory(image, 0);
  std::vector<uint16_t> from_file(300 * 200 * 3), from_memory(from_file.size());
  file.ReadSample(300, 200, from_file.data());
  memory.ReadSample(300, 200, from_memory.data());
  CHECK(from_file == from_memory);
  // Not decimated: the whole image.
  std::vector<uint16_t> whole(image.pixels.size());
  file.ReadSample(777, 391, whole.data());
  CHECK(whole == image.pixels);
}

TEST_CASE("A raster decoded whole gives the pixels it gives read in strips", "[imagery][raster]") {
  testing::TempDir dir;
  for (const bool overviews : {false, true}) {
    const std::string path = dir.Sub(overviews ? "overviews.tif" : "plain.tif");
    WriteTestRaster(path, 531, 389, 4,
                    {"TILED=YES", "BLOCKXSIZE=128", "BLOCKYSIZE=128", "COMPRESS=DEFLATE"});
    if (overviews) {
      GDALDatasetH ds = GDALOpen(path.c_str(), GA_Update);
      REQUIRE(ds != nullptr);
      int level = 2;
      REQUIRE(GDALBuildOverviews(ds, "AVERAGE", 1, &level, 0, nullptr, nullptr, nullptr) ==
              CE_None);
      GDALClose(ds);
    }
    const RasterReader reader = RasterReader::Open(path);
    const std::vector<int> bands = {4, 2, 3};
    GdalStripSource strips(reader, bands);
    DecodedStripSource decoded(reader, bands);
    INFO((overviews ? "with" : "without") << " overviews");
    CHECK(decoded.nodata() == strips.nodata());
    for (const auto& [row0, rows] : {std::pair{0, 100}, {100, 100}, {300, 89}, {0, 389}}) {
      std::vector<uint16_t> a(static_cast<size_t>(rows) * 531 * bands.size()), b(a.size());
      strips.ReadStrip(row0, rows, a.data());
      decoded.ReadStrip(row0, rows, b.data());
      CHECK(a == b);
    }
    // Decimated (from overviews when there are some), and full size.
    for (const auto& [w, h] : {std::pair{265, 194}, {100, 300}, {531, 389}}) {
      std::vector<uint16_t> a(static_cast<size_t>(w) * h * bands.size()), b(a.size());
      strips.ReadSample(w, h, a.data());
      decoded.ReadSample(w, h, b.data());
      CHECK(a == b);
    }
  }
}

TEST_CASE("A huge-page buffer is 2 MiB aligned and holds what is written", "[imagery][raster]") {
  HugePageBuffer<uint16_t> empty;
  CHECK(empty.size() == 0);
  HugePageBuffer<uint16_t> buffer(3'000'001);  // not a multiple of the page
  REQUIRE(buffer.size() == 3'000'001);
  CHECK(reinterpret_cast<uintptr_t>(buffer.data()) % (size_t{2} << 20) == 0);
  for (size_t i = 0; i < buffer.size(); ++i) {
    buffer.data()[i] = static_cast<uint16_t>(i * 7);
  }
  CHECK(buffer.data()[buffer.size() - 1] == static_cast<uint16_t>((buffer.size() - 1) * 7));
}

// Counts the errors GDAL reports from any thread (its decoding threads use the global handler).
namespace {
std::atomic<int> gdal_errors{0};
void CPL_STDCALL CountGdalError(CPLErr, CPLErrorNum, const char*) { ++gdal_errors; }
}  // namespace

TEST_CASE("A band-interleaved GeoTIFF reads correctly with GDAL's decoding threads on",
          "[imagery][raster]") {
  testing::TempDir dir;
  const std::string path = dir.Sub("band-interleaved.tif");
  const PlanarImage image = WriteTestRaster(
      path, 700, 530, 4,
      {"TILED=YES", "BLOCKXSIZE=128", "BLOCKYSIZE=128", "INTERLEAVE=BAND", "COMPRESS=DEFLATE"});
  const std::string saved = CPLGetConfigOption("GDAL_NUM_THREADS", "");
  CPLSetConfigOption("GDAL_NUM_THREADS", "2");
  gdal_errors = 0;
  CPLErrorHandler previous = CPLSetErrorHandler(CountGdalError);
  std::vector<uint16_t> whole(image.pixels.size());
  RasterReader::Open(path).ReadStrip({1, 2, 3, 4}, 0, 530, whole.data());
  CPLSetErrorHandler(previous);
  CPLSetConfigOption("GDAL_NUM_THREADS", saved.empty() ? nullptr : saved.c_str());
  CHECK(gdal_errors == 0);
  CHECK(whole == image.pixels);
}

TEST_CASE("A decimated read names a band out of range and reads nothing for no bands",
          "[imagery][raster]") {
  testing::TempDir dir;
  const std::string path = dir.Sub("two-bands.tif");
  WriteTestRaster(path, 64, 64, 2, {});
  std::vector<uint16_t> out(32 * 32);
  CHECK_THROWS_WITH(RasterReader::Open(path).ReadDecimated({3}, 32, 32, out.data()),
                    Catch::Contains("band 3 is out of range"));
  // No bands: nothing read, nothing written.
  out.assign(out.size(), 7);
  RasterReader::Open(path).ReadDecimated({}, 32, 32, out.data());
  CHECK(out == std::vector<uint16_t>(32 * 32, 7));
}

}  // namespace warmpool::imagery
