#include "imagery/morphology.h"

#include <algorithm>
#include <thread>

#include "imagery/change_math.h"

namespace warmpool::imagery {
namespace {

template <typename Fn>
void ParallelRows(int height, int threads, Fn&& fn) {
  threads = std::clamp(threads, 1, std::max(1, height / 64));
  if (threads == 1) {
    fn(0, height);
    return;
  }
  std::vector<std::thread> pool;
  const int per = (height + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    const int y0 = t * per;
    const int y1 = std::min(height, y0 + per);
    if (y0 < y1) {
      pool.emplace_back([&fn, y0, y1] { fn(y0, y1); });
    }
  }
  for (std::thread& th : pool) {
    th.join();
  }
}

// Horizontal min/max over [x-r, x+r] clipped to the row. REQUIRES: mask values are 0 or 1.
void HorizontalPass(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, int width, int y0,
                    int y1, int r, bool is_dilate) {
  for (int y = y0; y < y1; ++y) {
    const uint8_t* row = in + static_cast<size_t>(y) * width;
    uint8_t* dst = out + static_cast<size_t>(y) * width;
    if (r == 1 && width >= 3) {
      // Masks hold 0/1, so max is | and min is & (vectorises; std::max on references does not).
      dst[0] = is_dilate ? (row[0] | row[1]) : (row[0] & row[1]);
      if (is_dilate) {
        for (int x = 1; x + 1 < width; ++x) {
          dst[x] = row[x - 1] | row[x] | row[x + 1];
        }
      } else {
        for (int x = 1; x + 1 < width; ++x) {
          dst[x] = row[x - 1] & row[x] & row[x + 1];
        }
      }
      dst[width - 1] =
          is_dilate ? (row[width - 2] | row[width - 1]) : (row[width - 2] & row[width - 1]);
      continue;
    }
    for (int x = 0; x < width; ++x) {
      const int a = std::max(0, x - r), b = std::min(width - 1, x + r);
      uint8_t v = row[a];
      for (int k = a + 1; k <= b; ++k) {
        v = is_dilate ? (v | row[k]) : (v & row[k]);
      }
      dst[x] = v;
    }
  }
}

// Vertical min/max over rows [y-r, y+r] clipped to the image.
void VerticalPass(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, int width, int height,
                  int y0, int y1, int r, bool is_dilate) {
  for (int y = y0; y < y1; ++y) {
    const int a = std::max(0, y - r), b = std::min(height - 1, y + r);
    uint8_t* dst = out + static_cast<size_t>(y) * width;
    std::copy_n(in + static_cast<size_t>(a) * width, width, dst);
    for (int k = a + 1; k <= b; ++k) {
      const uint8_t* src = in + static_cast<size_t>(k) * width;
      if (is_dilate) {
        for (int x = 0; x < width; ++x) {
          dst[x] = dst[x] | src[x];
        }
      } else {
        for (int x = 0; x < width; ++x) {
          dst[x] = dst[x] & src[x];
        }
      }
    }
  }
}

}  // namespace

void ThresholdScores(const uint16_t* scores, size_t count, uint32_t threshold_bin, uint8_t* mask) {
  for (size_t i = 0; i < count; ++i) {
    mask[i] = IsChange(scores[i], threshold_bin) ? 1 : 0;
  }
}

void MorphologyPass(const uint8_t* in, uint8_t* out, int width, int height, int radius,
                    bool is_dilate, int threads) {
  if (radius <= 0) {
    std::copy_n(in, static_cast<size_t>(width) * height, out);
    return;
  }
  ParallelRows(height, threads, [&](int y0, int y1) {
    VerticalPass(in, out, width, height, y0, y1, radius, is_dilate);
    std::vector<uint8_t> row(static_cast<size_t>(width));
    for (int y = y0; y < y1; ++y) {
      uint8_t* dst = out + static_cast<size_t>(y) * width;
      std::copy_n(dst, width, row.data());
      HorizontalPass(row.data(), dst, width, 0, 1, radius, is_dilate);
    }
  });
}

void OpenClose(uint8_t* mask, int width, int height, int open_radius, int close_radius, int threads,
               std::vector<uint8_t>& work) {
  if (open_radius <= 0 && close_radius <= 0) {
    return;
  }
  const size_t count = static_cast<size_t>(width) * height;
  if (work.size() < count) {
    work.resize(count);
  }
  uint8_t* tmp = work.data();
  if (open_radius > 0) {
    MorphologyPass(mask, tmp, width, height, open_radius, false, threads);
    MorphologyPass(tmp, mask, width, height, open_radius, true, threads);
  }
  if (close_radius > 0) {
    MorphologyPass(mask, tmp, width, height, close_radius, true, threads);
    MorphologyPass(tmp, mask, width, height, close_radius, false, threads);
  }
}

void ClearNodata(const uint16_t* scores, size_t count, uint8_t* mask) {
  for (size_t i = 0; i < count; ++i) {
    mask[i] = scores[i] == kInvalidScore ? 0 : mask[i];
  }
}

}  // namespace warmpool::imagery
