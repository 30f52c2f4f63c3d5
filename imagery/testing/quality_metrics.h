#pragma once

// Accuracy of a change mask against ground truth, for the change class (pure).

#include <cstdint>

namespace warmpool::imagery {

struct Confusion {
  uint64_t tp = 0, fp = 0, fn = 0, tn = 0;

  double Precision() const { return tp + fp ? double(tp) / double(tp + fp) : 1.0; }
  double Recall() const { return tp + fn ? double(tp) / double(tp + fn) : 1.0; }
  double F1() const { return 2 * tp + fp + fn ? 2.0 * double(tp) / double(2 * tp + fp + fn) : 1.0; }
  double IoU() const { return tp + fp + fn ? double(tp) / double(tp + fp + fn) : 1.0; }
  double OverallAccuracy() const {
    const double n = double(tp + fp + fn + tn);
    return n > 0 ? double(tp + tn) / n : 1.0;
  }
  double Kappa() const;
};

// Compares predicted and truth masks (1 = change, 0 = no change); pixels where either is 255
// (nodata) are skipped.
Confusion CompareMasks(const uint8_t* predicted, const uint8_t* truth, uint64_t count);

}  // namespace warmpool::imagery
