#include "imagery/testing/quality_metrics.h"

namespace warmpool::imagery {

double Confusion::Kappa() const {
  const double n = double(tp + fp + fn + tn);
  if (n <= 0) {
    return 1.0;
  }
  const double po = double(tp + tn) / n;
  const double pe =
      (double(tp + fp) * double(tp + fn) + double(fn + tn) * double(fp + tn)) / (n * n);
  return pe < 1.0 ? (po - pe) / (1.0 - pe) : 1.0;
}

Confusion CompareMasks(const uint8_t* predicted, const uint8_t* truth, uint64_t count) {
  Confusion c;
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t p = predicted[i], t = truth[i];
    if (p == 255 || t == 255) {
      continue;
    }
    if (p == 1) {
      t == 1 ? ++c.tp : ++c.fp;
    } else {
      t == 1 ? ++c.fn : ++c.tn;
    }
  }
  return c;
}

}  // namespace warmpool::imagery
