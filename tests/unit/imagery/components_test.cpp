#include "imagery/components.h"

#include <functional>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

namespace warmpool::imagery {
namespace {

// Independent reference: iterative flood fill, 8-connected; returns per-pixel component areas.
std::vector<int64_t> NaiveAreas(const std::vector<uint8_t>& mask, int w, int h) {
  std::vector<int> label(mask.size(), -1);
  std::vector<int64_t> area_of_label;
  std::vector<int64_t> out(mask.size(), 0);
  for (size_t s = 0; s < mask.size(); ++s) {
    if (mask[s] != 1 || label[s] >= 0) {
      continue;
    }
    const int id = static_cast<int>(area_of_label.size());
    area_of_label.push_back(0);
    std::vector<size_t> stack = {s};
    label[s] = id;
    while (!stack.empty()) {
      const size_t p = stack.back();
      stack.pop_back();
      ++area_of_label[id];
      const int x = static_cast<int>(p % w), y = static_cast<int>(p / w);
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          const int xx = x + dx, yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
          const size_t q = static_cast<size_t>(yy) * w + xx;
          if (mask[q] == 1 && label[q] < 0) {
            label[q] = id;
            stack.push_back(q);
          }
        }
      }
    }
  }
  for (size_t i = 0; i < mask.size(); ++i) {
    out[i] = label[i] >= 0 ? area_of_label[label[i]] : 0;
  }
  return out;
}

TEST_CASE("FilterComponents keeps exactly the components at or above the MMU",
          "[imagery][components]") {
  std::mt19937 rng(11);
  const int w = 64, h = 48;
  for (int64_t mmu : {0, 2, 5, 20}) {
    DYNAMIC_SECTION("min area " << mmu) {
      std::vector<uint8_t> mask(static_cast<size_t>(w) * h);
      for (uint8_t& m : mask) {
        m = rng() % 5 < 2 ? 1 : 0;
      }
      const std::vector<int64_t> areas = NaiveAreas(mask, w, h);
      std::vector<uint8_t> got = mask;
      const auto regions = FilterComponents(got.data(), w, h, mmu);
      int64_t kept_area = 0;
      for (size_t i = 0; i < mask.size(); ++i) {
        const uint8_t expect = (mask[i] == 1 && areas[i] >= mmu) ? 1 : 0;
        REQUIRE(got[i] == expect);
        kept_area += expect;
      }
      int64_t region_area = 0;
      for (const Region& r : regions) {
        CHECK(r.area >= mmu);
        region_area += r.area;
      }
      CHECK(region_area == kept_area);
    }
  }
}

TEST_CASE("Diagonal neighbours are connected (8-connectivity) and bounds are exact",
          "[imagery][components]") {
  const int w = 6, h = 5;
  std::vector<uint8_t> mask(w * h, 0);
  mask[1 * w + 1] = 1;
  mask[2 * w + 2] = 1;
  mask[3 * w + 3] = 1;  // a diagonal of 3 px
  mask[0 * w + 5] = 1;  // a lone pixel
  const auto regions = FilterComponents(mask.data(), w, h, 2);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].area == 3);
  CHECK(regions[0].x_min == 1);
  CHECK(regions[0].y_min == 1);
  CHECK(regions[0].x_max == 3);
  CHECK(regions[0].y_max == 3);
  CHECK(regions[0].sum_x / regions[0].area == Approx(2.0));
  CHECK(mask[0 * w + 5] == 0);
}

}  // namespace
}  // namespace warmpool::imagery
