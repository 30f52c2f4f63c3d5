#pragma once

// Dependency-free synthetic image pairs for the GPU check (imagery/testing/synthetic_pair.* needs
// GDAL). Planar uint16, nodata 0, deterministic for a seed; built on several threads so a
// 10980 x 10980 x 4 pair takes about a second on 16 cores.

#include <cstdint>
#include <vector>

namespace warmpool::gpucheck {

enum class PairKind {
  kClean,          // after = before outside the inserted changes
  kGainOffset,     // after = gain * before + offset + noise, per band
  kMisregistered,  // kGainOffset, and after is shifted by one pixel in x and y
};

struct PairOptions {
  int width = 523;
  int height = 389;
  int band_count = 8;
  PairKind kind = PairKind::kGainOffset;
  uint64_t seed = 1;
  int nodata_border_px = 17;  // leftmost columns of `before` are nodata (0)
  int threads = 1;
};

struct CorePair {
  int width = 0;
  int height = 0;
  int band_count = 0;
  std::vector<uint16_t> before;  // band b of pixel i at [b * width * height + i]
  std::vector<uint16_t> after;
  std::vector<float> gain;  // after ~ gain * before + offset (the truth, per band)
  std::vector<float> offset;
};

// REQUIRES: width, height >= 16; 1 <= band_count <= 8; threads >= 1.
CorePair MakePair(const PairOptions& options);

const char* PairKindName(PairKind kind);

}  // namespace warmpool::gpucheck
