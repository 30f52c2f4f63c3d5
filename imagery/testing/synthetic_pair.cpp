#include "imagery/testing/synthetic_pair.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <random>

#include <cpl_conv.h>
#include <ogr_srs_api.h>

#include "imagery/imagery_error.h"
#include "imagery/raster_io.h"

namespace warmpool::imagery {
namespace {

constexpr int kClasses = 4;
// BGRN reflectance in DN per class: water, vegetation, soil, urban (imagery.md 7a).
constexpr std::array<std::array<float, 4>, kClasses> kSignature = {{
    {600, 500, 300, 200},
    {300, 600, 500, 3500},
    {1000, 1400, 1800, 2500},
    {1500, 1500, 1500, 1600},
}};
constexpr std::array<float, 4> kBuilding = {2600, 2600, 2700, 2800};
constexpr std::array<float, 4> kClearing = {1300, 1700, 2300, 1900};

float Signature(const std::array<float, 4>& sig, int band) {
  return band < 4 ? sig[band] : sig[band % 4] * 0.8f + 200.0f;  // extra bands: a related value
}

// Smooth value noise in [0, 1): `octaves` bilinear lattices, each twice as fine, amplitude halved.
std::vector<float> Fbm(int w, int h, int base_cell, int octaves, std::mt19937_64& rng) {
  std::vector<float> out(static_cast<size_t>(w) * h, 0.0f);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  float amplitude = 0.5f, total = 0.0f;
  int cell = base_cell;
  for (int o = 0; o < octaves && cell >= 1; ++o) {
    const int gw = w / cell + 2, gh = h / cell + 2;
    std::vector<float> grid(static_cast<size_t>(gw) * gh);
    for (float& g : grid) {
      g = u(rng);
    }
    for (int y = 0; y < h; ++y) {
      const float fy = static_cast<float>(y) / cell;
      const int y0 = static_cast<int>(fy);
      const float ty = fy - y0;
      const float sy = ty * ty * (3 - 2 * ty);
      for (int x = 0; x < w; ++x) {
        const float fx = static_cast<float>(x) / cell;
        const int x0 = static_cast<int>(fx);
        const float tx = fx - x0;
        const float sx = tx * tx * (3 - 2 * tx);
        const float a = grid[static_cast<size_t>(y0) * gw + x0];
        const float b = grid[static_cast<size_t>(y0) * gw + x0 + 1];
        const float c = grid[static_cast<size_t>(y0 + 1) * gw + x0];
        const float d = grid[static_cast<size_t>(y0 + 1) * gw + x0 + 1];
        out[static_cast<size_t>(y) * w + x] +=
            amplitude * ((a * (1 - sx) + b * sx) * (1 - sy) + (c * (1 - sx) + d * sx) * sy);
      }
    }
    total += amplitude;
    amplitude *= 0.5f;
    cell /= 2;
  }
  for (float& v : out) {
    v /= total;
  }
  return out;
}

uint16_t ToDn(float v) { return static_cast<uint16_t>(std::clamp(std::lround(v), 1L, 65535L)); }

}  // namespace

SynthPair GenerateSyntheticPair(const SynthOptions& o) {
  std::mt19937_64 rng(o.seed);
  const int w = o.width, h = o.height, nb = o.band_count;
  const size_t n = static_cast<size_t>(w) * h;
  SynthPair pair;
  pair.before = {w, h, nb, std::vector<uint16_t>(n * nb)};
  pair.after = pair.before;
  pair.truth.assign(n, 0);

  // Scene: land-cover class per pixel + texture.
  const std::vector<float> cover = Fbm(w, h, 64, 5, rng);
  const std::vector<float> texture = Fbm(w, h, 8, 3, rng);
  std::vector<uint8_t> cls(n);
  for (size_t i = 0; i < n; ++i) {
    const float c = cover[i];
    cls[i] = c < 0.38f ? 0 : c < 0.52f ? 1 : c < 0.62f ? 2 : 3;
  }
  // Change objects: label 1 building, 2 clearing, in scene coordinates.
  std::vector<uint8_t> change(n, 0);
  std::vector<uint8_t> truth_scene(n, 0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int max_side = std::max(6, o.max_object_side);
  if (!o.identical) {
    for (int k = 0; k < o.object_count; ++k) {
      const bool small = u(rng) < o.small_object_fraction;
      const bool building = u(rng) < 0.5;
      const int sw =
          small ? 2 + static_cast<int>(u(rng) * 2) : 5 + static_cast<int>(u(rng) * (max_side - 5));
      const int sh = small ? sw : 5 + static_cast<int>(u(rng) * (max_side - 5));
      const double cx = 4 + u(rng) * (w - 8), cy = 4 + u(rng) * (h - 8);
      const double angle = (building && !small && u(rng) < 0.5) ? u(rng) * 3.14159 : 0.0;
      const double ca = std::cos(angle), sa = std::sin(angle);
      // Clearings: an ellipse with a wobbly edge.
      const double wobble_phase = u(rng) * 6.28;
      std::vector<size_t> pixels;
      const int reach = static_cast<int>(std::max(sw, sh) * 0.75) + 2;
      for (int y = std::max(0, int(cy) - reach); y < std::min(h, int(cy) + reach); ++y) {
        for (int x = std::max(0, int(cx) - reach); x < std::min(w, int(cx) + reach); ++x) {
          const double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
          const double rx = dx * ca + dy * sa, ry = -dx * sa + dy * ca;
          bool inside;
          if (building || small) {
            inside = std::fabs(rx) <= sw * 0.5 && std::fabs(ry) <= sh * 0.5;
          } else {
            const double t = std::atan2(ry, rx);
            const double r = 1.0 + 0.15 * std::sin(3 * t + wobble_phase);
            const double ex = rx / (sw * 0.5), ey = ry / (sh * 0.5);
            inside = ex * ex + ey * ey <= r * r;
          }
          if (inside) {
            pixels.push_back(static_cast<size_t>(y) * w + x);
          }
        }
      }
      if (pixels.empty()) {
        continue;
      }
      ++pair.objects_inserted;
      const bool in_truth = static_cast<int64_t>(pixels.size()) >= o.truth_min_area_px;
      pair.objects_in_truth += in_truth ? 1 : 0;
      for (size_t i : pixels) {
        change[i] = building ? 1 : 2;
        truth_scene[i] = std::max<uint8_t>(truth_scene[i], in_truth ? 1 : 0);
      }
    }
  }

  pair.gain.assign(nb, 1.0f);
  pair.offset.assign(nb, 0.0f);
  if (o.radiometric_change && !o.identical) {
    for (int b = 0; b < nb; ++b) {
      pair.gain[b] = static_cast<float>(1.0 - o.gain_spread + 2 * o.gain_spread * u(rng));
      pair.offset[b] =
          static_cast<float>(o.offset_center - o.offset_spread + 2 * o.offset_spread * u(rng));
    }
  }
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int shift = o.identical ? 0 : o.misregistration_px;
  for (int b = 0; b < nb; ++b) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const size_t i = static_cast<size_t>(y) * w + x;
        const float tex = 1.0f + 0.12f * (texture[i] - 0.5f);
        const float scene = Signature(kSignature[cls[i]], b) * tex;
        const float noise_b =
            o.identical ? 0.0f : normal(rng) * static_cast<float>(o.noise_fraction) * scene;
        const uint16_t before = ToDn(scene + noise_b);
        pair.before.at(b, y, x) = before;
        if (o.identical) {
          pair.after.at(b, y, x) = before;
          continue;
        }
        // After: the scene (with changes) sampled `shift` pixels up-left, then gain/offset/noise.
        const int sx = std::clamp(x - shift, 0, w - 1), sy = std::clamp(y - shift, 0, h - 1);
        const size_t si = static_cast<size_t>(sy) * w + sx;
        const float stex = 1.0f + 0.12f * (texture[si] - 0.5f);
        float value = Signature(kSignature[cls[si]], b) * stex;
        if (change[si] == 1) {
          value = Signature(kBuilding, b) * (1.0f + 0.03f * (texture[si] - 0.5f));
        } else if (change[si] == 2) {
          value = Signature(kClearing, b) * stex;
        }
        value += normal(rng) * static_cast<float>(o.noise_fraction) * value;
        pair.after.at(b, y, x) = ToDn(pair.gain[b] * value + pair.offset[b]);
      }
    }
  }
  // Truth in the after geometry: a change appears where the shifted scene changed.
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const int sx = std::clamp(x - shift, 0, w - 1), sy = std::clamp(y - shift, 0, h - 1);
      pair.truth[static_cast<size_t>(y) * w + x] = truth_scene[static_cast<size_t>(sy) * w + sx];
    }
  }
  if (o.nodata_border_px > 0) {
    for (int b = 0; b < nb; ++b) {
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < std::min(w, o.nodata_border_px); ++x) {
          pair.before.at(b, y, x) = 0;
          pair.truth[static_cast<size_t>(y) * w + x] = 255;
        }
      }
    }
  }
  return pair;
}

nlohmann::json WriteSyntheticPair(const SynthPair& pair, const std::string& dir,
                                  const std::string& prefix, bool compress) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  GeoInfo geo;
  geo.has_geotransform = true;
  geo.geotransform = {500000.0, 4.77, 0.0, 5600000.0, 0.0, -4.77};
  {
    OGRSpatialReferenceH srs = OSRNewSpatialReference(nullptr);
    OSRImportFromEPSG(srs, 32633);
    char* wkt = nullptr;
    OSRExportToWkt(srs, &wkt);
    geo.crs_wkt = wkt != nullptr ? wkt : "";
    CPLFree(wkt);
    OSRDestroySpatialReference(srs);
  }
  const std::string base = (std::filesystem::path(dir) / prefix).string();
  nlohmann::json paths = {{"before", base + "_before.tif"},
                          {"after", base + "_after.tif"},
                          {"truth", base + "_truth.tif"}};
  WriteGeoTiffPlanarU16(paths["before"], pair.before.pixels.data(), pair.before.width,
                        pair.before.height, pair.before.band_count, geo, 0.0, compress);
  WriteGeoTiffPlanarU16(paths["after"], pair.after.pixels.data(), pair.after.width,
                        pair.after.height, pair.after.band_count, geo, 0.0, compress);
  WriteGeoTiffU8(paths["truth"], pair.truth.data(), pair.before.width, pair.before.height, geo,
                 255.0, "ground truth change mask");
  return paths;
}

}  // namespace warmpool::imagery
