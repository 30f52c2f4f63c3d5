#include "imagery/threshold.h"

#include <cmath>
#include <limits>
#include <vector>

namespace warmpool::imagery {
namespace {

uint32_t LastOccupied(std::span<const uint64_t> h) {
  for (size_t k = h.size(); k > 0; --k) {
    if (h[k - 1] != 0) {
      return static_cast<uint32_t>(k - 1);
    }
  }
  return h.empty() ? 0u : static_cast<uint32_t>(h.size() - 1);
}

}  // namespace

uint32_t OtsuThreshold(std::span<const uint64_t> h) {
  double total = 0, sum = 0;
  for (size_t k = 0; k < h.size(); ++k) {
    total += static_cast<double>(h[k]);
    sum += static_cast<double>(k) * static_cast<double>(h[k]);
  }
  const uint32_t last = LastOccupied(h);
  if (total <= 0) {
    return last;
  }
  double w0 = 0, sum0 = 0, best = 0;
  uint32_t best_k = last;
  for (size_t k = 0; k + 1 < h.size(); ++k) {
    w0 += static_cast<double>(h[k]);
    sum0 += static_cast<double>(k) * static_cast<double>(h[k]);
    const double w1 = total - w0;
    if (w0 <= 0 || w1 <= 0) {
      continue;
    }
    const double mu0 = sum0 / w0;
    const double mu1 = (sum - sum0) / w1;
    const double between = w0 * w1 * (mu0 - mu1) * (mu0 - mu1);
    if (between > best) {
      best = between;
      best_k = static_cast<uint32_t>(k);
    }
  }
  return best_k;
}

uint32_t KittlerIllingworthThreshold(std::span<const uint64_t> h) {
  const size_t n = h.size();
  std::vector<double> c0(n), c1(n), c2(n);  // cumulative count, sum, sum of squares
  double a0 = 0, a1 = 0, a2 = 0;
  for (size_t k = 0; k < n; ++k) {
    const double v = static_cast<double>(h[k]);
    const double x = static_cast<double>(k);
    a0 += v;
    a1 += v * x;
    a2 += v * x * x;
    c0[k] = a0;
    c1[k] = a1;
    c2[k] = a2;
  }
  if (a0 <= 0) {
    return LastOccupied(h);
  }
  double best = std::numeric_limits<double>::infinity();
  bool found = false;
  uint32_t best_k = 0;
  for (size_t k = 0; k + 1 < n; ++k) {
    const double n0 = c0[k], n1 = a0 - c0[k];
    if (n0 < 2 || n1 < 2) {
      continue;
    }
    const double m0 = c1[k] / n0, m1 = (a1 - c1[k]) / n1;
    const double v0 = c2[k] / n0 - m0 * m0;
    const double v1 = (a2 - c2[k]) / n1 - m1 * m1;
    if (v0 <= 1e-9 || v1 <= 1e-9) {
      continue;
    }
    const double p0 = n0 / a0, p1 = n1 / a0;
    const double j =
        p0 * 0.5 * std::log(v0) + p1 * 0.5 * std::log(v1) - p0 * std::log(p0) - p1 * std::log(p1);
    if (j < best) {
      best = j;
      best_k = static_cast<uint32_t>(k);
      found = true;
    }
  }
  return found ? best_k : OtsuThreshold(h);
}

uint32_t QuantileBin(std::span<const uint64_t> h, double fraction) {
  double total = 0;
  for (uint64_t v : h) {
    total += static_cast<double>(v);
  }
  if (total <= 0) {
    return 0;
  }
  double acc = 0;
  for (size_t k = 0; k < h.size(); ++k) {
    acc += static_cast<double>(h[k]);
    if (acc >= fraction * total) {
      return static_cast<uint32_t>(k);
    }
  }
  return static_cast<uint32_t>(h.size() - 1);
}

}  // namespace warmpool::imagery
