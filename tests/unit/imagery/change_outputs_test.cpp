#include "imagery/change_outputs.h"

#include <algorithm>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

namespace warmpool::imagery {
namespace {

// The stretch by its definition: sort the non-zero values and read two ranks.
std::pair<double, double> SortedStretch(const std::vector<uint16_t>& band) {
  std::vector<uint16_t> sorted;
  std::copy_if(band.begin(), band.end(), std::back_inserter(sorted),
               [](uint16_t v) { return v != 0; });
  if (sorted.empty()) {
    return {0.0, 1.0};
  }
  std::sort(sorted.begin(), sorted.end());
  const double lo = sorted[sorted.size() * 2 / 100];
  return {lo, std::max(lo + 1, static_cast<double>(sorted[sorted.size() * 98 / 100]))};
}

TEST_CASE("The quick-look stretch is the 2nd and 98th percentile of the non-zero values",
          "[imagery][outputs]") {
  std::mt19937 rng(7);
  for (const size_t count : {1u, 7u, 100u, 12345u, 1u << 18}) {
    for (const int range : {3, 300, 65536}) {
      std::vector<uint16_t> band(count);
      for (uint16_t& v : band) {
        v = rng() % 4 == 0 ? 0 : static_cast<uint16_t>(rng() % range);  // about a quarter nodata
      }
      INFO("count " << count << ", range " << range);
      CHECK(StretchRange(band.data(), band.size()) == SortedStretch(band));
    }
  }
}

TEST_CASE("The quick-look stretch of a flat or empty band", "[imagery][outputs]") {
  const std::vector<uint16_t> zeros(100, 0);
  CHECK(StretchRange(zeros.data(), zeros.size()) == std::pair<double, double>{0.0, 1.0});
  CHECK(StretchRange(zeros.data(), 0) == std::pair<double, double>{0.0, 1.0});
  const std::vector<uint16_t> flat(100, 65535);
  CHECK(StretchRange(flat.data(), flat.size()) == std::pair<double, double>{65535.0, 65536.0});
}

}  // namespace
}  // namespace warmpool::imagery
