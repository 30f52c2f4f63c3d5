#include "imagery/morphology.h"

#include <algorithm>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

namespace warmpool::imagery {
namespace {

// Independent naive reference: window min/max clipped to the image.
std::vector<uint8_t> NaivePass(const std::vector<uint8_t>& in, int w, int h, int r, bool dilate) {
  std::vector<uint8_t> out(in.size());
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t v = dilate ? 0 : 1;
      for (int dy = -r; dy <= r; ++dy) {
        for (int dx = -r; dx <= r; ++dx) {
          const int yy = y + dy, xx = x + dx;
          if (yy < 0 || xx < 0 || yy >= h || xx >= w) {
            continue;
          }
          const uint8_t p = in[static_cast<size_t>(yy) * w + xx];
          v = dilate ? std::max(v, p) : std::min(v, p);
        }
      }
      out[static_cast<size_t>(y) * w + x] = v;
    }
  }
  return out;
}

TEST_CASE("Opening and closing match a naive reference", "[imagery][morphology]") {
  std::mt19937 rng(7);
  const int w = 97, h = 83;
  for (int radius : {1, 2}) {
    for (int threads : {1, 2}) {
      DYNAMIC_SECTION("radius " << radius << " threads " << threads) {
        std::vector<uint8_t> mask(static_cast<size_t>(w) * h);
        for (uint8_t& m : mask) {
          m = rng() % 3 == 0 ? 1 : 0;
        }
        std::vector<uint8_t> expect =
            NaivePass(NaivePass(mask, w, h, radius, false), w, h, radius, true);
        expect = NaivePass(NaivePass(expect, w, h, 1, true), w, h, 1, false);
        std::vector<uint8_t> got = mask;
        std::vector<uint8_t> work;
        OpenClose(got.data(), w, h, radius, 1, threads, work);
        CHECK(got == expect);
      }
    }
  }
}

TEST_CASE("Opening radius 1 removes lines thinner than 3 px and keeps blocks",
          "[imagery][morphology]") {
  const int w = 20, h = 20;
  std::vector<uint8_t> mask(w * h, 0);
  for (int x = 0; x < w; ++x) {
    mask[5 * w + x] = 1;  // 1-px line (misregistration edge)
  }
  for (int y = 10; y < 14; ++y) {
    for (int x = 10; x < 14; ++x) {
      mask[y * w + x] = 1;  // 4x4 block
    }
  }
  std::vector<uint8_t> work;
  OpenClose(mask.data(), w, h, 1, 0, 1, work);
  int count = 0;
  for (uint8_t m : mask) {
    count += m;
  }
  CHECK(count == 16);
  CHECK(mask[5 * w + 3] == 0);
  CHECK(mask[12 * w + 12] == 1);
}

TEST_CASE("ThresholdScores and ClearNodata", "[imagery][morphology]") {
  const std::vector<uint16_t> scores = {0, 5, 6, 0xFFFF, static_cast<uint16_t>(6 | 0xF000)};
  std::vector<uint8_t> mask(scores.size());
  ThresholdScores(scores.data(), scores.size(), 5, mask.data());
  CHECK(mask == std::vector<uint8_t>{0, 0, 1, 0, 1});
  std::vector<uint8_t> all(scores.size(), 1);
  ClearNodata(scores.data(), scores.size(), all.data());
  CHECK(all == std::vector<uint8_t>{1, 1, 1, 0, 1});
}

}  // namespace
}  // namespace warmpool::imagery
