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
// - 4+ bands (multispectral: Landsat, Sentinel-2, PlanetScope): IR-MAD, Kittler-Illingworth on
//   sqrt(chi2), no smoothing (a 30 m pixel is already an object).
// - up to 3 bands: IR-MAD has too few bands (three visible bands correlate so closely that its
//   canonical correlations reach 1 and the reweighting collapses), so CVA on standardised bands
//   with a 3x3 mean of the magnitude; 8-bit RGB (aerial and sub-metre photo products, whose
//   labelled changes are whole objects over large parts of the scene) takes the EM threshold,
//   16-bit data Otsu's without the median floor (EM over-flags a scene where change is rare;
//   the floor, meant for unchanged pairs, decided the threshold on every real pair measured).
// The measurements behind each choice are in docs/QUALITY.md.
std::string SelectByData(const AutoChoices& choices, const DataTraits& data,
                         ChangeOptions& options);

}  // namespace warmpool::imagery
