#include "gpu-check/core_pair.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace warmpool::gpucheck {
namespace {

// SplitMix64: a cheap, well-mixed hash of a pixel coordinate (Steele et al. 2014).
uint64_t Mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1) from a hash.
float Unit(uint64_t h) { return static_cast<float>(h >> 40) / static_cast<float>(1 << 23) - 1.0f; }

uint16_t ToDn(float v) { return static_cast<uint16_t>(std::clamp(v, 1.0f, 65535.0f)); }

// A change rectangle: `after` gets +delta DN in every band inside it.
struct Change {
  int x0, y0, x1, y1;
  float delta;
};

}  // namespace

const char* PairKindName(PairKind kind) {
  switch (kind) {
    case PairKind::kClean:
      return "clean";
    case PairKind::kGainOffset:
      return "gain-offset+noise";
    case PairKind::kMisregistered:
      return "misregistered-1px";
  }
  return "?";
}

CorePair MakePair(const PairOptions& o) {
  CorePair pair;
  pair.width = o.width;
  pair.height = o.height;
  pair.band_count = o.band_count;
  const size_t n = static_cast<size_t>(o.width) * o.height;
  pair.before.resize(n * o.band_count);
  pair.after.resize(n * o.band_count);
  const bool radiometric = o.kind != PairKind::kClean;
  const int shift = o.kind == PairKind::kMisregistered ? 1 : 0;
  for (int b = 0; b < o.band_count; ++b) {
    pair.gain.push_back(radiometric ? 0.85f + 0.05f * b : 1.0f);
    pair.offset.push_back(radiometric ? 120.0f - 40.0f * b : 0.0f);
  }
  // Smooth land cover from separable row/column profiles plus hashed texture: cheap per pixel.
  std::vector<float> col(static_cast<size_t>(o.width + 1) * o.band_count);
  std::vector<float> row(static_cast<size_t>(o.height + 1) * o.band_count);
  for (int b = 0; b < o.band_count; ++b) {
    for (int x = 0; x <= o.width; ++x) {
      col[b * (o.width + 1) + x] = 250.0f * std::sin(0.021f * x + b) + 90.0f * std::sin(0.13f * x);
    }
    for (int y = 0; y <= o.height; ++y) {
      row[b * (o.height + 1) + y] = 200.0f * std::cos(0.017f * y - b) + 70.0f * std::cos(0.11f * y);
    }
  }
  std::vector<Change> changes;
  const int count = std::max<int>(4, static_cast<int>(n / 6000));
  for (int k = 0; k < count; ++k) {
    const uint64_t h = Mix(o.seed * 1000003 + k);
    const int side_w = 2 + static_cast<int>(h % 40), side_h = 2 + static_cast<int>((h >> 8) % 40);
    const int x0 = static_cast<int>((h >> 16) % o.width),
              y0 = static_cast<int>((h >> 36) % o.height);
    changes.push_back({x0, y0, std::min(o.width, x0 + side_w), std::min(o.height, y0 + side_h),
                       (h >> 60) % 2 == 0 ? 1400.0f : -500.0f});
  }
  const auto fill_rows = [&](int y_begin, int y_end) {
    for (int b = 0; b < o.band_count; ++b) {
      const float base = 700.0f + 350.0f * b;
      const float* cb = &col[b * (o.width + 1)];
      const float* rb = &row[b * (o.height + 1)];
      uint16_t* before = pair.before.data() + b * n;
      uint16_t* after = pair.after.data() + b * n;
      for (int y = y_begin; y < y_end; ++y) {
        for (int x = 0; x < o.width; ++x) {
          const size_t i = static_cast<size_t>(y) * o.width + x;
          const uint64_t h = Mix((o.seed << 40) ^ (static_cast<uint64_t>(b) << 56) ^ i);
          const float scene = base + cb[x] + rb[y] + 30.0f * Unit(h);
          // The after scene at (x + shift, y + shift): a 1 px misregistration.
          const int xs = std::min(o.width - 1, x + shift), ys = std::min(o.height - 1, y + shift);
          const uint64_t hs = Mix((o.seed << 40) ^ (static_cast<uint64_t>(b) << 56) ^
                                  (static_cast<size_t>(ys) * o.width + xs));
          const float scene_after = base + cb[xs] + rb[ys] + 30.0f * Unit(hs);
          float a = pair.gain[b] * scene_after + pair.offset[b];
          if (radiometric) {
            a += 25.0f * Unit(Mix(h));
          }
          before[i] = x < o.nodata_border_px ? 0 : ToDn(scene);
          after[i] = (Mix(h ^ 0x5555) % 997 == 0) ? 0 : ToDn(a);  // sparse nodata in `after`
        }
      }
      for (const Change& c : changes) {
        for (int y = std::max(c.y0, y_begin); y < std::min(c.y1, y_end); ++y) {
          for (int x = c.x0; x < c.x1; ++x) {
            uint16_t& v = after[static_cast<size_t>(y) * o.width + x];
            if (v != 0) {
              v = ToDn(static_cast<float>(v) + c.delta);
            }
          }
        }
      }
    }
  };
  const int threads = std::max(1, std::min(o.threads, o.height / 16));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back(fill_rows, o.height * t / threads, o.height * (t + 1) / threads);
  }
  for (std::thread& th : pool) {
    th.join();
  }
  return pair;
}

}  // namespace warmpool::gpucheck
