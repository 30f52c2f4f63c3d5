#include "policy/keep_alive_cost.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace warmpool::policy {
namespace {

constexpr auto kBin = static_cast<double>(IdleGapHistogram::kBinSeconds);
constexpr auto kRange = static_cast<double>(IdleGapHistogram::kRangeBins) * kBin;

// Share of the gaps longer than s, conditioned on none ending before s0: linear within a bin (as
// GapShareWithin), flat from the range's end (the out-of-range gaps end after 4 h). One gap more
// than recorded lies beyond the range: the next busy period may never come (Laplace's rule of
// succession for an outcome not seen yet), so keeping a pod never costs nothing, and the fewer
// gaps are known the more it costs.
class Survival {
 public:
  Survival(const IdleGapHistogram& gaps, double s0) {
    const size_t n = std::min<size_t>(gaps.bins.size(), IdleGapHistogram::kRangeBins);
    for (size_t i = 0; i < n; ++i) below_[i + 1] = below_[i] + gaps.bins[i];
    for (size_t i = n + 1; i < below_.size(); ++i) below_[i] = below_[n];
    double total = 0;
    for (const uint32_t b : gaps.bins) total += b;
    total_ = total > 0 ? total + 1 : 0;
    alive_ = total_ > 0 ? Unconditioned(s0) : 0;
  }
  // Whether any gap is known.
  bool Known() const { return alive_ > 0; }
  double operator()(double s) const { return Unconditioned(s) / alive_; }
  // Integral of the conditioned share over [from, to]: exact, S being linear within bins.
  double Integral(double from, double to) const {
    double sum = 0;
    while (from < to) {
      const double edge = std::min(to, from < kRange ? (std::floor(from / kBin) + 1) * kBin : to);
      sum += ((*this)(from) + (*this)(edge)) / 2 * (edge - from);
      from = edge;
    }
    return sum;
  }

 private:
  double Unconditioned(double s) const {
    if (s <= 0) return 1;
    const double at = std::min(s, kRange);
    const auto bin = std::min(static_cast<size_t>(at / kBin), below_.size() - 2);
    const double within = below_[bin] + (below_[bin + 1] - below_[bin]) *
                                            (at - static_cast<double>(bin) * kBin) / kBin;
    return 1 - within / total_;
  }

  std::array<double, IdleGapHistogram::kRangeBins + 1> below_{};  // gaps ending before each edge
  double total_ = 0;
  double alive_ = 0;
};

}  // namespace

double ExpectedCostKeepAlive(const IdleGapHistogram& gaps, const KeepAliveCosts& c) {
  const double s0 = std::max(0.0, c.elapsed);
  const Survival S(gaps, s0);
  if (!S.Known()) return 0;
  const double h = c.to_zero + c.linger;
  // The histogram says nothing past its range; a cap that is not a number keeps nothing.
  const double cap = std::isfinite(c.cap) ? std::clamp(c.cap, 0.0, kRange) : 0.0;
  const auto starts = [&](double k) {
    return c.pod_start * (S(s0 + k + c.to_zero) - S(s0 + k + h)) + c.cold_start * S(s0 + k + h);
  };
  double node = S.Integral(s0, s0 + h);
  double best = node + starts(0);
  double best_k = 0;
  // Ties keep more: a keep-alive within a node-second (expected) of the cheapest shorter one is
  // taken, as releasing would save next to nothing and restart a pod.
  constexpr double kTie = 1;
  // Whole bins, then the cap itself.
  for (double last = 0, k = std::min(kBin, cap); k > last; last = k, k = std::min(k + kBin, cap)) {
    node += S.Integral(s0 + h + last, s0 + h + k);
    const double cost = node + starts(k);
    if (cost <= best + kTie) best_k = k;
    best = std::min(best, cost);
  }
  return best_k;
}

}  // namespace warmpool::policy
