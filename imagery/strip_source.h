#pragma once

// Where the pipeline reads pixels from: a GDAL raster or an in-memory planar image (tests,
// benchmarks, the synthetic generator).

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "imagery/huge_page_buffer.h"
#include "imagery/raster_io.h"

namespace warmpool::imagery {

class StripSource {
 public:
  virtual ~StripSource() = default;
  virtual int width() const = 0;
  virtual int height() const = 0;
  virtual int band_count() const = 0;  // selected bands
  virtual uint16_t nodata() const = 0;
  // Rows [row0, row0 + rows) of the selected bands, planar (plane = rows * width).
  virtual void ReadStrip(int row0, int rows, uint16_t* out) = 0;
  // The whole image resampled (nearest) to out_width x out_height, planar.
  virtual void ReadSample(int out_width, int out_height, uint16_t* out) = 0;
};

// A planar uint16 image held in memory: band b of pixel (r, c) at [b*w*h + r*w + c].
struct PlanarImage {
  int width = 0;
  int height = 0;
  int band_count = 0;
  std::vector<uint16_t> pixels;

  uint16_t& at(int band, int row, int col) {
    return pixels[(static_cast<size_t>(band) * height + row) * width + col];
  }
  uint16_t at(int band, int row, int col) const {
    return pixels[(static_cast<size_t>(band) * height + row) * width + col];
  }
};

// Reads from a PlanarImage (not owned; must outlive the source).
class MemoryStripSource final : public StripSource {
 public:
  MemoryStripSource(const PlanarImage& image, uint16_t nodata) : image_(image), nodata_(nodata) {}
  int width() const override { return image_.width; }
  int height() const override { return image_.height; }
  int band_count() const override { return image_.band_count; }
  uint16_t nodata() const override { return nodata_; }
  void ReadStrip(int row0, int rows, uint16_t* out) override;
  void ReadSample(int out_width, int out_height, uint16_t* out) override;

 private:
  const PlanarImage& image_;
  uint16_t nodata_;
};

// The nodata value the pipeline uses for a raster: its nodata value when that is an integer in
// 0..65535, else 0.
uint16_t PipelineNodata(const RasterInfo& info);

// What the two sources of a GDAL raster share: the 1-based `bands` they read and the nodata
// value (PipelineNodata). `reader` is not owned and must outlive the source.
class RasterStripSource : public StripSource {
 public:
  int width() const override { return reader_.info().width; }
  int height() const override { return reader_.info().height; }
  int band_count() const override { return static_cast<int>(bands_.size()); }
  uint16_t nodata() const override { return nodata_; }

 protected:
  RasterStripSource(const RasterReader& reader, std::vector<int> bands);

  const RasterReader& reader_;
  const std::vector<int> bands_;
  const uint16_t nodata_;
};

// Reads a GDAL raster strip by strip.
class GdalStripSource final : public RasterStripSource {
 public:
  GdalStripSource(const RasterReader& reader, std::vector<int> bands)
      : RasterStripSource(reader, std::move(bands)) {}
  void ReadStrip(int row0, int rows, uint16_t* out) override;
  void ReadSample(int out_width, int out_height, uint16_t* out) override;
};

// Decodes a GDAL raster whole at construction, in one multi-threaded GDAL read into huge pages,
// then serves strips and the sample from memory. The pipeline otherwise decodes every block twice
// (the sample, then the strips); RunChangeJob uses this source for pairs within a memory budget.
// A raster with overviews still takes its sample from GDAL, so this source gives exactly the
// pixels GdalStripSource gives. Throws ImageryError (kCorrupt) from the read.
class DecodedStripSource final : public RasterStripSource {
 public:
  DecodedStripSource(const RasterReader& reader, std::vector<int> bands);
  void ReadStrip(int row0, int rows, uint16_t* out) override;
  void ReadSample(int out_width, int out_height, uint16_t* out) override;

 private:
  HugePageBuffer<uint16_t> pixels_;  // planar, as PlanarImage
};

}  // namespace warmpool::imagery
