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

// The scene: a land-cover class per pixel and a fine texture.
struct Scene {
  std::vector<float> texture;
  std::vector<uint8_t> cls;
};

Scene MakeScene(int w, int h, std::mt19937_64& rng) {
  const size_t n = static_cast<size_t>(w) * h;
  const std::vector<float> cover = Fbm(w, h, 64, 5, rng);
  Scene scene;
  scene.texture = Fbm(w, h, 8, 3, rng);
  scene.cls.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const float c = cover[i];
    scene.cls[i] = c < 0.38f ? 0 : c < 0.52f ? 1 : c < 0.62f ? 2 : 3;
  }
  return scene;
}

// One change object's shape: a (possibly rotated) rectangle, or for a clearing an ellipse with a
// wobbly edge, centred on (cx, cy).
struct ObjectShape {
  bool building = false;
  bool small = false;
  int sw = 0;
  int sh = 0;
  double cx = 0;
  double cy = 0;
  double angle = 0;
  double wobble_phase = 0;
};

ObjectShape DrawShape(const SynthOptions& o, int w, int h, std::mt19937_64& rng,
                      std::uniform_real_distribution<double>& u) {
  const int max_side = std::max(6, o.max_object_side);
  ObjectShape s;
  s.small = u(rng) < o.small_object_fraction;
  s.building = u(rng) < 0.5;
  s.sw = s.small ? 2 + static_cast<int>(u(rng) * 2) : 5 + static_cast<int>(u(rng) * (max_side - 5));
  s.sh = s.small ? s.sw : 5 + static_cast<int>(u(rng) * (max_side - 5));
  s.cx = 4 + u(rng) * (w - 8);
  s.cy = 4 + u(rng) * (h - 8);
  s.angle = (s.building && !s.small && u(rng) < 0.5) ? u(rng) * 3.14159 : 0.0;
  s.wobble_phase = u(rng) * 6.28;
  return s;
}

// The pixels (y * w + x) the shape covers.
std::vector<size_t> ShapePixels(const ObjectShape& s, int w, int h) {
  const double ca = std::cos(s.angle), sa = std::sin(s.angle);
  std::vector<size_t> pixels;
  const int reach = static_cast<int>(std::max(s.sw, s.sh) * 0.75) + 2;
  for (int y = std::max(0, int(s.cy) - reach); y < std::min(h, int(s.cy) + reach); ++y) {
    for (int x = std::max(0, int(s.cx) - reach); x < std::min(w, int(s.cx) + reach); ++x) {
      const double dx = x + 0.5 - s.cx, dy = y + 0.5 - s.cy;
      const double rx = dx * ca + dy * sa, ry = -dx * sa + dy * ca;
      bool inside;
      if (s.building || s.small) {
        inside = std::fabs(rx) <= s.sw * 0.5 && std::fabs(ry) <= s.sh * 0.5;
      } else {
        const double t = std::atan2(ry, rx);
        const double r = 1.0 + 0.15 * std::sin(3 * t + s.wobble_phase);
        const double ex = rx / (s.sw * 0.5), ey = ry / (s.sh * 0.5);
        inside = ex * ex + ey * ey <= r * r;
      }
      if (inside) {
        pixels.push_back(static_cast<size_t>(y) * w + x);
      }
    }
  }
  return pixels;
}

// Change objects in scene coordinates: `change` gets 1 (building) or 2 (clearing), truth_scene 1
// where an object at least o.truth_min_area_px large lies.
void InsertChanges(const SynthOptions& o, std::mt19937_64& rng,
                   std::uniform_real_distribution<double>& u, std::vector<uint8_t>& change,
                   std::vector<uint8_t>& truth_scene, SynthPair& pair) {
  for (int k = 0; k < o.object_count; ++k) {
    const ObjectShape shape = DrawShape(o, o.width, o.height, rng, u);
    const std::vector<size_t> pixels = ShapePixels(shape, o.width, o.height);
    if (pixels.empty()) {
      continue;
    }
    ++pair.objects_inserted;
    const bool in_truth = static_cast<int64_t>(pixels.size()) >= o.truth_min_area_px;
    pair.objects_in_truth += in_truth ? 1 : 0;
    for (size_t i : pixels) {
      change[i] = shape.building ? 1 : 2;
      truth_scene[i] = std::max<uint8_t>(truth_scene[i], in_truth ? 1 : 0);
    }
  }
}

// Both dates' pixels: before = scene + noise; after = the changed scene sampled `shift` pixels
// up-left, then gain/offset/noise.
void RenderBands(const SynthOptions& o, const Scene& scene, const std::vector<uint8_t>& change,
                 int shift, std::mt19937_64& rng, SynthPair& pair) {
  const int w = o.width, h = o.height;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int b = 0; b < o.band_count; ++b) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const size_t i = static_cast<size_t>(y) * w + x;
        const float tex = 1.0f + 0.12f * (scene.texture[i] - 0.5f);
        const float value_b = Signature(kSignature[scene.cls[i]], b) * tex;
        const float noise_b =
            o.identical ? 0.0f : normal(rng) * static_cast<float>(o.noise_fraction) * value_b;
        const uint16_t before = ToDn(value_b + noise_b);
        pair.before.at(b, y, x) = before;
        if (o.identical) {
          pair.after.at(b, y, x) = before;
          continue;
        }
        const int sx = std::clamp(x - shift, 0, w - 1), sy = std::clamp(y - shift, 0, h - 1);
        const size_t si = static_cast<size_t>(sy) * w + sx;
        const float stex = 1.0f + 0.12f * (scene.texture[si] - 0.5f);
        float value = Signature(kSignature[scene.cls[si]], b) * stex;
        if (change[si] == 1) {
          value = Signature(kBuilding, b) * (1.0f + 0.03f * (scene.texture[si] - 0.5f));
        } else if (change[si] == 2) {
          value = Signature(kClearing, b) * stex;
        }
        value += normal(rng) * static_cast<float>(o.noise_fraction) * value;
        pair.after.at(b, y, x) = ToDn(pair.gain[b] * value + pair.offset[b]);
      }
    }
  }
}

// Truth in the after geometry (a change appears where the shifted scene changed), then the
// nodata border of `before`.
void FinishTruth(const SynthOptions& o, const std::vector<uint8_t>& truth_scene, int shift,
                 SynthPair& pair) {
  const int w = o.width, h = o.height;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const int sx = std::clamp(x - shift, 0, w - 1), sy = std::clamp(y - shift, 0, h - 1);
      pair.truth[static_cast<size_t>(y) * w + x] = truth_scene[static_cast<size_t>(sy) * w + sx];
    }
  }
  if (o.nodata_border_px > 0) {
    for (int b = 0; b < o.band_count; ++b) {
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < std::min(w, o.nodata_border_px); ++x) {
          pair.before.at(b, y, x) = 0;
          pair.truth[static_cast<size_t>(y) * w + x] = 255;
        }
      }
    }
  }
}

}  // namespace

SynthPair GenerateSyntheticPair(const SynthOptions& o) {
  std::mt19937_64 rng(o.seed);
  const int w = o.width, h = o.height, nb = o.band_count;
  const size_t n = static_cast<size_t>(w) * h;
  SynthPair pair;
  pair.before = {w, h, nb, std::vector<uint16_t>(n * nb)};
  pair.after = pair.before;
  pair.truth.assign(n, 0);

  const Scene scene = MakeScene(w, h, rng);
  std::vector<uint8_t> change(n, 0);
  std::vector<uint8_t> truth_scene(n, 0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (!o.identical) {
    InsertChanges(o, rng, u, change, truth_scene, pair);
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
  const int shift = o.identical ? 0 : o.misregistration_px;
  RenderBands(o, scene, change, shift, rng, pair);
  FinishTruth(o, truth_scene, shift, pair);
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
