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

namespace {

struct Component {
  double weight, mean, var;
};

double LogDensity(const Component& c, double v) {
  const double d = v - c.mean;
  return std::log(c.weight) - 0.5 * std::log(c.var) - d * d / (2 * c.var);
}

}  // namespace

uint32_t EmThreshold(std::span<const uint64_t> histogram) {
  std::vector<double> value, count;
  std::vector<uint32_t> bin;
  double total = 0;
  for (size_t k = 0; k < histogram.size(); ++k) {
    if (histogram[k] == 0) continue;
    const double x = static_cast<double>(k);
    value.push_back(std::sqrt(x));
    count.push_back(static_cast<double>(histogram[k]));
    bin.push_back(static_cast<uint32_t>(k));
    total += static_cast<double>(histogram[k]);
  }
  if (value.size() < 2) return bin.empty() ? 0 : bin.back();
  const size_t n = value.size();
  // Otsu on the mapped values: the starting split.
  double sum_all = 0;
  for (size_t i = 0; i < n; ++i) sum_all += count[i] * value[i];
  double w0 = 0, s0 = 0, best = -1;
  size_t split = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    w0 += count[i];
    s0 += count[i] * value[i];
    const double w1 = total - w0;
    const double d = s0 / w0 - (sum_all - s0) / w1;
    const double between = w0 * w1 * d * d;
    if (between > best) {
      best = between;
      split = i;
    }
  }
  const double range = value.back() - value.front();
  const double var_floor = range * range * 1e-8 + 1e-12;
  Component c[2];
  for (int j = 0; j < 2; ++j) {
    double w = 0, m = 0, v = 0;
    for (size_t i = 0; i < n; ++i) {
      if ((i <= split) == (j == 0)) {
        w += count[i];
        m += count[i] * value[i];
      }
    }
    m /= w;
    for (size_t i = 0; i < n; ++i) {
      if ((i <= split) == (j == 0)) v += count[i] * (value[i] - m) * (value[i] - m);
    }
    c[j] = {w / total, m, v / w + var_floor};
  }
  for (int it = 0; it < 200; ++it) {
    double w[2] = {}, m[2] = {}, q[2] = {};
    for (size_t i = 0; i < n; ++i) {
      const double l0 = LogDensity(c[0], value[i]), l1 = LogDensity(c[1], value[i]);
      const double r1 = 1.0 / (1.0 + std::exp(l0 - l1));
      const double r[2] = {1.0 - r1, r1};
      for (int j = 0; j < 2; ++j) {
        w[j] += r[j] * count[i];
        m[j] += r[j] * count[i] * value[i];
        q[j] += r[j] * count[i] * value[i] * value[i];
      }
    }
    double moved = 0;
    for (int j = 0; j < 2; ++j) {
      if (!(w[j] > 0)) return bin.back();  // one component emptied: no second class
      const double mean = m[j] / w[j];
      moved = std::max(moved, std::fabs(mean - c[j].mean));
      c[j] = {w[j] / total, mean, std::max(q[j] / w[j] - mean * mean, 0.0) + var_floor};
    }
    if (moved < 1e-7 * (range + 1e-12)) break;
  }
  const int lo = c[0].mean <= c[1].mean ? 0 : 1;
  const Component& unchanged = c[lo];
  const Component& changed = c[1 - lo];
  for (size_t i = 0; i < n; ++i) {
    if (value[i] > unchanged.mean &&
        LogDensity(changed, value[i]) > LogDensity(unchanged, value[i])) {
      return i == 0 ? 0 : bin[i] - 1;
    }
  }
  return bin.back();
}

}  // namespace warmpool::imagery
