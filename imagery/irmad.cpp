#include "imagery/irmad.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "imagery/chi_square.h"

namespace warmpool::imagery {
namespace {

using Matrix = std::array<std::array<double, kMaxBands>, kMaxBands>;

// Lower-triangular Cholesky factor of the k x k block of `m`; false when not positive definite.
bool Cholesky(const Matrix& m, int k, Matrix& l) {
  l = Matrix{};
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j <= i; ++j) {
      double s = m[i][j];
      for (int p = 0; p < j; ++p) s -= l[i][p] * l[j][p];
      if (i == j) {
        if (!(s > 0)) return false;
        l[i][i] = std::sqrt(s);
      } else {
        l[i][j] = s / l[j][j];
      }
    }
  }
  return true;
}

// Inverse of a lower-triangular matrix (forward substitution).
Matrix InvertLower(const Matrix& l, int k) {
  Matrix inv{};
  for (int c = 0; c < k; ++c) {
    for (int i = 0; i < k; ++i) {
      double s = i == c ? 1.0 : 0.0;
      for (int p = 0; p < i; ++p) s -= l[i][p] * inv[p][c];
      inv[i][c] = s / l[i][i];
    }
  }
  return inv;
}

Matrix Multiply(const Matrix& a, const Matrix& b, int k) {
  Matrix c{};
  for (int i = 0; i < k; ++i)
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < k; ++j) c[i][j] += a[i][p] * b[p][j];
  return c;
}

Matrix Transpose(const Matrix& a, int k) {
  Matrix t{};
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) t[i][j] = a[j][i];
  return t;
}

// Eigen-decomposition of a symmetric k x k matrix by cyclic Jacobi rotations: values[i] with
// eigenvector column i of `vectors`.
void SymmetricEigen(Matrix a, int k, std::array<double, kMaxBands>& values, Matrix& vectors) {
  vectors = Matrix{};
  for (int i = 0; i < k; ++i) vectors[i][i] = 1.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int i = 0; i < k; ++i)
      for (int j = i + 1; j < k; ++j) off += a[i][j] * a[i][j];
    if (off < 1e-30) break;
    for (int p = 0; p < k; ++p) {
      for (int q = p + 1; q < k; ++q) {
        if (std::fabs(a[p][q]) < 1e-300) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t =
            (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1);
        const double s = t * c;
        for (int r = 0; r < k; ++r) {  // A = J^T A J, columns then rows
          const double arp = a[r][p], arq = a[r][q];
          a[r][p] = c * arp - s * arq;
          a[r][q] = s * arp + c * arq;
        }
        for (int r = 0; r < k; ++r) {
          const double apr = a[p][r], aqr = a[q][r];
          a[p][r] = c * apr - s * aqr;
          a[q][r] = s * apr + c * aqr;
        }
        for (int r = 0; r < k; ++r) {
          const double vrp = vectors[r][p], vrq = vectors[r][q];
          vectors[r][p] = c * vrp - s * vrq;
          vectors[r][q] = s * vrp + c * vrq;
        }
      }
    }
  }
  for (int i = 0; i < k; ++i) values[i] = a[i][i];
}

// P(chi2_k > x) by linear interpolation in a table: the survival function is smooth and the
// fit evaluates it for every pixel in every round.
class SurvivalTable {
 public:
  explicit SurvivalTable(int dof) : top_(ChiSquareUpperQuantile(1e-12, dof)) {
    for (int i = 0; i < kSize; ++i) table_[i] = ChiSquareSurvival(top_ * i / (kSize - 1), dof);
  }
  double operator()(double x) const {
    const double pos = x / top_ * (kSize - 1);
    if (!(pos < kSize - 1)) return 0.0;
    const int i = static_cast<int>(pos);
    const double f = pos - i;
    return table_[i] * (1 - f) + table_[i + 1] * f;
  }

 private:
  static constexpr int kSize = 4096;
  double top_;
  std::array<double, kSize> table_{};
};

// The valid sample pixels the fit uses, as doubles: row-major [pixel][band] for each date.
struct FitPixels {
  int k = 0;
  std::vector<double> x, y;
  size_t count() const { return k ? x.size() / k : 0; }
};

FitPixels SelectPixels(const PixelSample& s, uint16_t nodata_x, uint16_t nodata_y,
                       size_t max_pixels) {
  FitPixels f;
  f.k = s.band_count;
  size_t valid = 0;
  const auto is_valid = [&](size_t i) {
    for (int b = 0; b < s.band_count; ++b) {
      if (s.before[b * s.count + i] == nodata_x || s.after[b * s.count + i] == nodata_y)
        return false;
    }
    return true;
  };
  for (size_t i = 0; i < s.count; ++i) valid += is_valid(i);
  const size_t stride =
      std::max<size_t>(1, (valid + max_pixels - 1) / std::max<size_t>(1, max_pixels));
  size_t seen = 0;
  for (size_t i = 0; i < s.count; ++i) {
    if (!is_valid(i)) continue;
    if (seen++ % stride != 0) continue;
    for (int b = 0; b < s.band_count; ++b) {
      f.x.push_back(s.before[b * s.count + i]);
      f.y.push_back(s.after[b * s.count + i]);
    }
  }
  return f;
}

struct Round {
  Matrix a{}, b{};  // row i: projection of variate i (unit variance)
  std::array<double, kMaxBands> mean_x{}, mean_y{}, rho{};
};

// One canonical correlation analysis with per-pixel weights; false when degenerate.
bool WeightedCca(const FitPixels& f, const std::vector<double>& w, Round& out) {
  const int k = f.k;
  const size_t n = f.count();
  double sw = 0;
  std::array<double, kMaxBands> mx{}, my{};
  for (size_t i = 0; i < n; ++i) {
    sw += w[i];
    for (int b = 0; b < k; ++b) {
      mx[b] += w[i] * f.x[i * k + b];
      my[b] += w[i] * f.y[i * k + b];
    }
  }
  if (!(sw > 0)) return false;
  for (int b = 0; b < k; ++b) {
    mx[b] /= sw;
    my[b] /= sw;
  }
  Matrix sxx{}, syy{}, sxy{};
  std::array<double, kMaxBands> dx{}, dy{};
  for (size_t i = 0; i < n; ++i) {
    for (int b = 0; b < k; ++b) {
      dx[b] = f.x[i * k + b] - mx[b];
      dy[b] = f.y[i * k + b] - my[b];
    }
    for (int r = 0; r < k; ++r) {
      const double wx = w[i] * dx[r], wy = w[i] * dy[r];
      for (int c = 0; c < k; ++c) {
        sxx[r][c] += wx * dx[c];
        syy[r][c] += wy * dy[c];
        sxy[r][c] += wx * dy[c];
      }
    }
  }
  double trace_x = 0, trace_y = 0;
  for (int r = 0; r < k; ++r) {
    for (int c = 0; c < k; ++c) {
      sxx[r][c] /= sw;
      syy[r][c] /= sw;
      sxy[r][c] /= sw;
    }
    trace_x += sxx[r][r];
    trace_y += syy[r][r];
  }
  if (!(trace_x > 0) || !(trace_y > 0)) return false;
  // Ridge (Nielsen 2007's regularisation in its simplest form): a constant band or two
  // collinear ones would make the covariances singular.
  for (int r = 0; r < k; ++r) {
    sxx[r][r] += 1e-9 * trace_x / k;
    syy[r][r] += 1e-9 * trace_y / k;
  }
  Matrix lx, ly;
  if (!Cholesky(sxx, k, lx) || !Cholesky(syy, k, ly)) return false;
  const Matrix lx_inv = InvertLower(lx, k);
  const Matrix ly_inv = InvertLower(ly, k);
  const Matrix syy_inv = Multiply(Transpose(ly_inv, k), ly_inv, k);
  // Sxx^-1/2 Sxy Syy^-1 Syx Sxx^-T/2, symmetric; its eigenvalues are rho^2.
  const Matrix m = Multiply(Multiply(Multiply(lx_inv, sxy, k), syy_inv, k),
                            Multiply(Transpose(sxy, k), Transpose(lx_inv, k), k), k);
  std::array<double, kMaxBands> r2{};
  Matrix u;
  SymmetricEigen(m, k, r2, u);
  std::array<int, kMaxBands> order{};
  for (int i = 0; i < k; ++i) order[i] = i;
  for (int i = 1; i < k; ++i) {  // insertion sort: ascending rho^2 (std::sort trips GCC 12's
    for (int j = i; j > 0 && r2[order[j]] < r2[order[j - 1]]; --j) {  // -Warray-bounds here)
      std::swap(order[j], order[j - 1]);
    }
  }
  const Matrix lx_inv_t = Transpose(lx_inv, k);
  const Matrix syx = Transpose(sxy, k);
  for (int v = 0; v < k; ++v) {
    const int e = order[v];
    std::array<double, kMaxBands> a{}, b{};
    for (int r = 0; r < k; ++r)
      for (int c = 0; c < k; ++c) a[r] += lx_inv_t[r][c] * u[c][e];
    // b proportional to Syy^-1 Syx a; both scaled to unit variance.
    std::array<double, kMaxBands> syx_a{};
    for (int r = 0; r < k; ++r)
      for (int c = 0; c < k; ++c) syx_a[r] += syx[r][c] * a[c];
    for (int r = 0; r < k; ++r)
      for (int c = 0; c < k; ++c) b[r] += syy_inv[r][c] * syx_a[c];
    const auto quad = [&](const Matrix& s, const std::array<double, kMaxBands>& z) {
      double q = 0;
      for (int r = 0; r < k; ++r)
        for (int c = 0; c < k; ++c) q += z[r] * s[r][c] * z[c];
      return q;
    };
    const double va = quad(sxx, a), vb = quad(syy, b);
    if (!(va > 0) || !(vb > 0)) return false;
    double rho = 0;
    for (int r = 0; r < k; ++r) {
      out.a[v][r] = a[r] / std::sqrt(va);
      out.b[v][r] = b[r] / std::sqrt(vb);
    }
    for (int r = 0; r < k; ++r)
      for (int c = 0; c < k; ++c) rho += out.a[v][r] * sxy[r][c] * out.b[v][c];
    // A MAD with rho -> 1 has variance -> 0; cap so identical bands cannot divide by zero.
    out.rho[v] = std::clamp(rho, 0.0, 1.0 - 1e-6);
  }
  out.mean_x = mx;
  out.mean_y = my;
  return true;
}

double ChiSquare(const Round& r, int k, const double* x, const double* y) {
  double chi2 = 0;
  for (int v = 0; v < k; ++v) {
    double mad = 0;
    for (int b = 0; b < k; ++b) {
      mad += r.a[v][b] * (x[b] - r.mean_x[b]) - r.b[v][b] * (y[b] - r.mean_y[b]);
    }
    chi2 += mad * mad / (2 * (1 - r.rho[v]));
  }
  return chi2;
}

}  // namespace

IrMadFit FitIrMad(const PixelSample& sample, uint16_t nodata_before, uint16_t nodata_after,
                  const IrMadOptions& options) {
  IrMadFit fit;
  const int k = sample.band_count;
  fit.bands = k;
  const FitPixels f = SelectPixels(sample, nodata_before, nodata_after, options.max_pixels);
  const size_t n = f.count();
  fit.pixels = n;
  if (n < static_cast<size_t>(2 * k + 1)) return fit;
  const SurvivalTable survival(k);
  std::vector<double> weights(n, 1.0);
  Round best;
  bool have = false;
  for (int it = 0; it < options.max_iterations; ++it) {
    Round round;
    if (!WeightedCca(f, weights, round)) break;
    fit.iterations = it + 1;
    double moved = 0;
    for (int v = 0; v < k; ++v) moved = std::max(moved, std::fabs(round.rho[v] - best.rho[v]));
    best = round;
    const bool settled = have && moved < options.tolerance;
    have = true;
    if (settled) {
      fit.converged = true;
      break;
    }
    for (size_t i = 0; i < n; ++i) {
      weights[i] = survival(ChiSquare(round, k, &f.x[i * k], &f.y[i * k]));
    }
  }
  if (!have) return fit;
  for (int v = 0; v < k; ++v) {
    const double inv_sd = 1.0 / std::sqrt(2 * (1 - best.rho[v]));
    double c = 0;
    for (int b = 0; b < k; ++b) {
      fit.before_proj[v][b] = static_cast<float>(best.a[v][b] * inv_sd);
      fit.after_proj[v][b] = static_cast<float>(best.b[v][b] * inv_sd);
      c += (best.a[v][b] * best.mean_x[b] - best.b[v][b] * best.mean_y[b]) * inv_sd;
    }
    fit.center[v] = static_cast<float>(c);
    fit.rho.push_back(best.rho[v]);
  }
  return fit;
}

void ApplyIrMad(const IrMadFit& fit, FusedParams& p) {
  p.method = Method::kIrMad;
  for (int v = 0; v < kMaxBands; ++v) {
    p.mad_center[v] = fit.center[v];
    for (int b = 0; b < kMaxBands; ++b) {
      p.mad_before[v][b] = fit.before_proj[v][b];
      p.mad_after[v][b] = fit.after_proj[v][b];
    }
  }
}

}  // namespace warmpool::imagery
