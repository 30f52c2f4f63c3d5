#include "worker/imagery/strip_source.h"

#include <algorithm>
#include <cmath>

namespace warmpool::imagery {

void MemoryStripSource::ReadStrip(int row0, int rows, uint16_t* out) {
  const size_t plane = static_cast<size_t>(rows) * image_.width;
  for (int b = 0; b < image_.band_count; ++b) {
    const uint16_t* src =
        image_.pixels.data() + (static_cast<size_t>(b) * image_.height + row0) * image_.width;
    std::copy_n(src, plane, out + b * plane);
  }
}

void MemoryStripSource::ReadSample(int out_width, int out_height, uint16_t* out) {
  const size_t plane = static_cast<size_t>(out_width) * out_height;
  for (int b = 0; b < image_.band_count; ++b) {
    for (int r = 0; r < out_height; ++r) {
      const int src_r = NearestSourceIndex(r, image_.height, out_height);
      for (int c = 0; c < out_width; ++c) {
        out[b * plane + static_cast<size_t>(r) * out_width + c] =
            image_.at(b, src_r, NearestSourceIndex(c, image_.width, out_width));
      }
    }
  }
}

GdalStripSource::GdalStripSource(RasterReader reader, std::vector<int> bands)
    : reader_(std::move(reader)), bands_(std::move(bands)) {
  const std::optional<double> nd = reader_.info().nodata;
  if (nd && *nd >= 0 && *nd <= 65535 && std::floor(*nd) == *nd) {
    nodata_ = static_cast<uint16_t>(*nd);
  }
}

void GdalStripSource::ReadStrip(int row0, int rows, uint16_t* out) {
  reader_.ReadStrip(bands_, row0, rows, out);
}

void GdalStripSource::ReadSample(int out_width, int out_height, uint16_t* out) {
  reader_.ReadDecimated(bands_, out_width, out_height, out);
}

}  // namespace warmpool::imagery
