#include "imagery/threshold.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

namespace warmpool::imagery {
namespace {

std::vector<uint64_t> TwoGaussians(double m0, double s0, double n0, double m1, double s1,
                                   double n1) {
  std::vector<uint64_t> h(4096, 0);
  for (int k = 0; k < 4096; ++k) {
    const double a = n0 * std::exp(-0.5 * (k - m0) * (k - m0) / (s0 * s0));
    const double b = n1 * std::exp(-0.5 * (k - m1) * (k - m1) / (s1 * s1));
    h[k] = static_cast<uint64_t>(a + b);
  }
  return h;
}

TEST_CASE("Otsu splits a balanced bimodal histogram between the modes", "[imagery][threshold]") {
  const auto h = TwoGaussians(500, 60, 1000, 2500, 60, 1000);
  // The between-class variance is flat across the empty gap; Otsu takes its first bin, just
  // above the tail of the lower mode (mean + 3.5 sigma ~ 710).
  const uint32_t t = OtsuThreshold(h);
  CHECK(t > 680);
  CHECK(t < 2200);
}

TEST_CASE("Kittler-Illingworth handles a rare change class", "[imagery][threshold]") {
  // 2 % change: KI's threshold sits close to the edge of the no-change mode.
  const auto h = TwoGaussians(300, 50, 100000, 2000, 200, 2000);
  const uint32_t ki = KittlerIllingworthThreshold(h);
  CHECK(ki > 450);
  CHECK(ki < 1500);
}

TEST_CASE("Degenerate histograms change nothing", "[imagery][threshold]") {
  std::vector<uint64_t> empty(4096, 0);
  CHECK(OtsuThreshold(empty) == 4095u);
  std::vector<uint64_t> single(4096, 0);
  single[0] = 1000;  // identical images: every magnitude is 0
  CHECK(OtsuThreshold(single) == 0u);
  CHECK(KittlerIllingworthThreshold(single) == 0u);
  single[7] = 0;
  CHECK(QuantileBin(single, 0.5) == 0u);
}

TEST_CASE("QuantileBin finds the median bin", "[imagery][threshold]") {
  std::vector<uint64_t> h(16, 0);
  h[2] = 10;
  h[5] = 10;
  h[9] = 30;
  CHECK(QuantileBin(h, 0.5) == 9u);
  CHECK(QuantileBin(h, 0.2) == 2u);
  CHECK(QuantileBin(h, 0.4) == 5u);
}

}  // namespace
}  // namespace warmpool::imagery
