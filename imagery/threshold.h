#pragma once

// Automatic thresholds on a histogram of quantised change magnitudes (pure functions).
// A returned bin k means: change when a pixel's bin > k.

#include <cstdint>
#include <span>

namespace warmpool::imagery {

// Otsu (1979): maximises the between-class variance w0 w1 (mu0 - mu1)^2. Returns the last
// non-empty bin (nothing changes) when the histogram is empty or has a single occupied bin.
uint32_t OtsuThreshold(std::span<const uint64_t> histogram);

// Kittler & Illingworth (1986) minimum error: minimises
// J(k) = P0 ln s0 + P1 ln s1 - P0 ln P0 - P1 ln P1 over splits where both classes have a positive
// variance. Falls back to Otsu when no such split exists.
uint32_t KittlerIllingworthThreshold(std::span<const uint64_t> histogram);

// Expectation-maximisation of a two-Gaussian mixture (no change, change) on the histogram with
// bin k standing for sqrt(k), where the two classes of a change magnitude are closer to
// Gaussian than on the magnitude itself (Bruzzone & Prieto 2000, doi:10.1109/36.843009), started
// from Otsu's split on that scale; returns the last bin above the no-change mean where the
// no-change posterior still wins (the Bayes minimum-error threshold). EM iterations are bounded
// (200). Returns the last non-empty bin (nothing changes) when fewer than two bins are occupied.
uint32_t EmThreshold(std::span<const uint64_t> histogram);

// The smallest bin at which the cumulative count reaches `fraction` of the total (0 if empty).
uint32_t QuantileBin(std::span<const uint64_t> histogram, double fraction);

}  // namespace warmpool::imagery
