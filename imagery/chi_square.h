#pragma once

// The chi-square distribution, for IR-MAD's no-change probabilities and thresholds (pure).

namespace warmpool::imagery {

// P(X > x) for X ~ chi-square with `dof` degrees of freedom: the regularised upper incomplete
// gamma function Q(dof / 2, x / 2) (series below a + 1, continued fraction above; Press et al.,
// Numerical Recipes, 3rd ed., 6.2). 1 for x <= 0. REQUIRES: dof > 0.
double ChiSquareSurvival(double x, double dof);

// The x with P(X > x) = upper_tail (bisection on ChiSquareSurvival to 1e-10 relative).
// REQUIRES: 0 < upper_tail < 1, dof > 0.
double ChiSquareUpperQuantile(double upper_tail, double dof);

}  // namespace warmpool::imagery
