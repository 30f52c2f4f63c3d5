#include "imagery/method_selection.h"

namespace warmpool::imagery {

std::string SelectByData(const AutoChoices& c, const DataTraits& data, ChangeOptions& o) {
  if (!c.enabled) return "";
  const std::string bands =
      std::to_string(data.band_count) + " band(s), " + (data.eight_bit ? "8-bit" : "16-bit");
  if (data.band_count > 3 || !data.eight_bit) {
    o.method = Method::kIrMad;
    if (c.normalization) o.normalization = Normalization::kNone;
    if (c.threshold) o.threshold = ThresholdMethod::kKittlerIllingworth;
    if (c.smooth) o.smooth_radius = 0;
    return bands +
           ": IR-MAD (invariant to each date's gain and offset) with the Kittler-Illingworth "
           "threshold on its magnitude and a 1 % no-change-probability floor";
  }
  o.method = Method::kCva;
  if (c.normalization) o.normalization = Normalization::kStandardize;
  if (c.threshold) o.threshold = ThresholdMethod::kEm;
  if (c.smooth) o.smooth_radius = 1;
  if (c.floor) o.auto_floor_factor = 0;
  return bands +
         ": an RGB photo product, where IR-MAD's canonical correlations reach 1, so CVA on "
         "standardised bands with a 3x3 mean of the magnitude and an EM threshold on "
         "sqrt(magnitude)";
}

}  // namespace warmpool::imagery
