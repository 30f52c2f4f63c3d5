#pragma once

// The task's default: the method chosen from the data when the caller names none (pure).

#include <string>

#include "imagery/change_detection.h"

namespace warmpool::imagery {

// Which options the caller left to the data (method "auto" or absent).
struct AutoChoices {
  bool enabled = false;  // method was "auto" or absent; the flags below say what else was absent
  bool normalization = true;
  bool threshold = true;
  bool smooth = true;
  bool floor = true;  // auto_floor_factor (the task's median_floor)
};

// What the choice looks at: the selected band count and whether the rasters are 8-bit.
struct DataTraits {
  int band_count = 0;
  bool eight_bit = false;
};

// Fills the options the caller left open and returns why, for the result document:
// - 8-bit data with up to 3 bands (RGB photo products: aerial, sub-metre satellite): three
//   visible bands correlate so closely that IR-MAD's canonical correlations reach 1 and its
//   reweighting collapses, so CVA on standardised bands, a 3x3 mean of the magnitude (a changed
//   object spans many pixels at that resolution) and the EM threshold on sqrt(magnitude), with
//   no median floor.
// - everything else (multispectral, or 16-bit): IR-MAD, Kittler-Illingworth on sqrt(chi2), no
//   smoothing (a 30 m pixel is already an object).
// The measurements behind each choice are in docs/QUALITY.md.
std::string SelectByData(const AutoChoices& choices, const DataTraits& data,
                         ChangeOptions& options);

}  // namespace warmpool::imagery
