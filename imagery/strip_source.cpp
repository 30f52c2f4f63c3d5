#include "imagery/strip_source.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace warmpool::imagery {

namespace {

// Rows [row0, row0 + rows) of a planar image (band b of pixel (r, c) at [(b * height + r) * width
// + c]), planar with plane = rows * width.
void CopyStrip(const uint16_t* pixels, int width, int height, int band_count, int row0, int rows,
               uint16_t* out) {
  const size_t plane = static_cast<size_t>(rows) * width;
  for (int b = 0; b < band_count; ++b) {
    const uint16_t* src = pixels + (static_cast<size_t>(b) * height + row0) * width;
    std::copy_n(src, plane, out + b * plane);
  }
}

// A planar image resampled (nearest, as RasterReader::ReadDecimated without overviews).
void SampleNearest(const uint16_t* pixels, int width, int height, int band_count, int out_width,
                   int out_height, uint16_t* out) {
  std::vector<int> cols(static_cast<size_t>(out_width));
  for (int c = 0; c < out_width; ++c) {
    cols[c] = NearestSourceIndex(c, width, out_width);
  }
  const size_t plane = static_cast<size_t>(out_width) * out_height;
  for (int b = 0; b < band_count; ++b) {
    for (int r = 0; r < out_height; ++r) {
      const uint16_t* src =
          pixels +
          (static_cast<size_t>(b) * height + NearestSourceIndex(r, height, out_height)) * width;
      uint16_t* dst = out + b * plane + static_cast<size_t>(r) * out_width;
      for (int c = 0; c < out_width; ++c) {
        dst[c] = src[cols[c]];
      }
    }
  }
}

}  // namespace

void MemoryStripSource::ReadStrip(int row0, int rows, uint16_t* out) {
  CopyStrip(image_.pixels.data(), image_.width, image_.height, image_.band_count, row0, rows, out);
}

void MemoryStripSource::ReadSample(int out_width, int out_height, uint16_t* out) {
  SampleNearest(image_.pixels.data(), image_.width, image_.height, image_.band_count, out_width,
                out_height, out);
}

uint16_t PipelineNodata(const RasterInfo& info) {
  const std::optional<double> nd = info.nodata;
  if (nd && *nd >= 0 && *nd <= 65535 && std::floor(*nd) == *nd) {
    return static_cast<uint16_t>(*nd);
  }
  return 0;
}

RasterStripSource::RasterStripSource(const RasterReader& reader, std::vector<int> bands)
    : reader_(reader), bands_(std::move(bands)), nodata_(PipelineNodata(reader.info())) {}

void GdalStripSource::ReadStrip(int row0, int rows, uint16_t* out) {
  reader_.ReadStrip(bands_, row0, rows, out);
}

void GdalStripSource::ReadSample(int out_width, int out_height, uint16_t* out) {
  reader_.ReadDecimated(bands_, out_width, out_height, out);
}

DecodedStripSource::DecodedStripSource(const RasterReader& reader, std::vector<int> bands)
    : RasterStripSource(reader, std::move(bands)),
      pixels_(static_cast<size_t>(width()) * height() * bands_.size()) {
  // One read of the whole raster: GDAL decodes its blocks on GDAL_NUM_THREADS threads straight
  // into the buffer. Read in strips instead, the same decode goes through the block cache and
  // took about twice as long here (docs/benchmarks/imagery.md, "Whole-pair decode").
  reader_.ReadStrip(bands_, 0, height(), pixels_.data());
}

void DecodedStripSource::ReadStrip(int row0, int rows, uint16_t* out) {
  CopyStrip(pixels_.data(), width(), height(), band_count(), row0, rows, out);
}

void DecodedStripSource::ReadSample(int out_width, int out_height, uint16_t* out) {
  if (!bands_.empty() && reader_.HasOverviews(bands_[0])) {
    return reader_.ReadDecimated(bands_, out_width, out_height, out);
  }
  SampleNearest(pixels_.data(), width(), height(), band_count(), out_width, out_height, out);
}

}  // namespace warmpool::imagery
