#include "imagery/chi_square.h"

#include <cmath>

namespace warmpool::imagery {
namespace {

constexpr int kMaxTerms = 500;
constexpr double kEpsilon = 1e-15;

// Lower regularised gamma P(a, x) by its series; converges fast for x < a + 1.
double LowerGammaSeries(double a, double x) {
  double term = 1.0 / a;
  double sum = term;
  for (int n = 1; n < kMaxTerms; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * kEpsilon) break;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

// Upper regularised gamma Q(a, x) by its continued fraction (modified Lentz); for x >= a + 1.
double UpperGammaFraction(double a, double x) {
  constexpr double kTiny = 1e-300;
  double b = x + 1.0 - a;
  double c = 1.0 / kTiny;
  double d = 1.0 / b;
  double h = d;
  for (int i = 1; i < kMaxTerms; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEpsilon) break;
  }
  return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}

}  // namespace

double ChiSquareSurvival(double x, double dof) {
  if (!(x > 0)) return 1.0;
  const double a = dof / 2.0;
  const double half = x / 2.0;
  return half < a + 1.0 ? 1.0 - LowerGammaSeries(a, half) : UpperGammaFraction(a, half);
}

double ChiSquareUpperQuantile(double upper_tail, double dof) {
  double lo = 0.0;
  double hi = dof + 10.0;
  while (ChiSquareSurvival(hi, dof) > upper_tail) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-10 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (ChiSquareSurvival(mid, dof) > upper_tail ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace warmpool::imagery
