#pragma once

// Iteratively reweighted multivariate alteration detection (IR-MAD; Nielsen, "The regularized
// iteratively reweighted MAD method for change detection in multi- and hyperspectral data",
// IEEE TIP 16(2), 2007, doi:10.1109/TIP.2006.888195). Pure: fitted on a pixel sample.
//
// Canonical correlation analysis of the two dates gives pairs of projections a_i, b_i whose
// difference MAD_i = a_i.(x - mean_x) - b_i.(y - mean_y) has variance 2 (1 - rho_i). Unchanged
// pixels make chi2 = sum_i MAD_i^2 / (2 (1 - rho_i)) chi-square with k degrees of freedom; each
// iteration weighs every pixel by its no-change probability P(chi2_k > chi2) and refits, until
// the canonical correlations settle. MADs are invariant to any affine map of either date's bands,
// so no radiometric normalisation is needed.

#include <cstdint>
#include <vector>

#include "imagery/change_math.h"
#include "imagery/normalization.h"

namespace warmpool::imagery {

struct IrMadOptions {
  int max_iterations = 50;     // bound on reweighting rounds
  double tolerance = 1e-3;     // stop when no canonical correlation moves more than this
  size_t max_pixels = 262144;  // the fit uses at most this many valid sample pixels (strided)
};

struct IrMadFit {
  int bands = 0;
  // Row i: the projection of variate i, pre-divided by its standard deviation sqrt(2 (1 - rho)),
  // so chi2 = sum_i (before_proj[i].x - after_proj[i].y - center[i])^2.
  float before_proj[kMaxBands][kMaxBands] = {};
  float after_proj[kMaxBands][kMaxBands] = {};
  float center[kMaxBands] = {};
  std::vector<double> rho;  // canonical correlations, ascending
  int iterations = 0;       // reweighting rounds run
  bool converged = false;   // the correlations settled within max_iterations
  size_t pixels = 0;        // sample pixels used
};

// Fits IR-MAD on the valid pixels of `sample` (a pixel with any band equal to its date's nodata
// is left out). With fewer valid pixels than 2k + 1 or degenerate covariances, returns the fit of
// the last good iteration (or an all-zero projection: nothing changes).
IrMadFit FitIrMad(const PixelSample& sample, uint16_t nodata_before, uint16_t nodata_after,
                  const IrMadOptions& options = {});

// Copies the projections into the fused pass's parameters (method kIrMad).
void ApplyIrMad(const IrMadFit& fit, FusedParams& params);

}  // namespace warmpool::imagery
