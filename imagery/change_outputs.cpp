#include "imagery/change_outputs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "imagery/imagery_error.h"

namespace warmpool::imagery {
namespace {

std::array<double, 2> ToMap(const GeoInfo& geo, double px, double py) {
  const auto& g = geo.geotransform;
  return {g[0] + px * g[1] + py * g[2], g[3] + px * g[4] + py * g[5]};
}

}  // namespace

std::array<double, 4> MapBounds(const Region& r, const GeoInfo& geo) {
  if (!geo.has_geotransform) {
    return {double(r.x_min), double(r.y_min), double(r.x_max + 1), double(r.y_max + 1)};
  }
  std::array<double, 4> box = {INFINITY, INFINITY, -INFINITY, -INFINITY};
  for (double px : {double(r.x_min), double(r.x_max + 1)}) {
    for (double py : {double(r.y_min), double(r.y_max + 1)}) {
      const auto [x, y] = ToMap(geo, px, py);
      box[0] = std::min(box[0], x);
      box[1] = std::min(box[1], y);
      box[2] = std::max(box[2], x);
      box[3] = std::max(box[3], y);
    }
  }
  return box;
}

double PixelArea(const GeoInfo& geo) {
  if (!geo.has_geotransform) {
    return 1.0;
  }
  const auto& g = geo.geotransform;
  return std::fabs(g[1] * g[5] - g[2] * g[4]);
}

nlohmann::json RegionsJson(const std::vector<Region>& regions, const GeoInfo& geo, size_t limit) {
  std::vector<size_t> order(regions.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return regions[a].area > regions[b].area; });
  nlohmann::json out = nlohmann::json::array();
  const double pixel_area = PixelArea(geo);
  for (size_t k = 0; k < order.size() && k < limit; ++k) {
    const Region& r = regions[order[k]];
    const auto box = MapBounds(r, geo);
    out.push_back({{"id", order[k] + 1},
                   {"area_px", r.area},
                   {"area_map", static_cast<double>(r.area) * pixel_area},
                   {"pixel_bbox", {r.x_min, r.y_min, r.x_max, r.y_max}},
                   {"map_bbox", {box[0], box[1], box[2], box[3]}},
                   {"centroid_px", {r.sum_x / r.area, r.sum_y / r.area}}});
  }
  return out;
}

std::string RegionsGeoJson(const std::vector<Region>& regions, const GeoInfo& geo,
                           const std::string& crs_name) {
  nlohmann::json features = nlohmann::json::array();
  const double pixel_area = PixelArea(geo);
  for (size_t k = 0; k < regions.size(); ++k) {
    const Region& r = regions[k];
    const auto b = MapBounds(r, geo);
    nlohmann::json ring = {{b[0], b[1]}, {b[2], b[1]}, {b[2], b[3]}, {b[0], b[3]}, {b[0], b[1]}};
    features.push_back({{"type", "Feature"},
                        {"geometry", {{"type", "Polygon"}, {"coordinates", {ring}}}},
                        {"properties",
                         {{"id", k + 1},
                          {"area_px", r.area},
                          {"area_map", static_cast<double>(r.area) * pixel_area},
                          {"pixel_bbox", {r.x_min, r.y_min, r.x_max, r.y_max}}}}});
  }
  nlohmann::json doc = {{"type", "FeatureCollection"}, {"features", features}};
  if (!crs_name.empty()) {
    doc["crs"] = {{"type", "name"}, {"properties", {{"name", crs_name}}}};
  }
  return doc.dump() + '\n';
}

std::pair<double, double> StretchRange(const uint16_t* band, size_t count) {
  // Counting 65,536 bins instead of sorting the values: same ranks, one pass (sorting a 1024^2
  // band took tens of milliseconds per channel).
  std::vector<size_t> counts(size_t{1} << 16, 0);
  for (size_t i = 0; i < count; ++i) {
    ++counts[band[i]];
  }
  const size_t n = count - counts[0];
  if (n == 0) {
    return {0.0, 1.0};
  }
  // The value at 0-based rank r among the non-zero values.
  const auto value_at_rank = [&](size_t r) {
    size_t below = 0;
    size_t v = 1;
    while (below + counts[v] <= r) {
      below += counts[v];
      ++v;
    }
    return static_cast<double>(v);
  };
  const double lo = value_at_rank(n * 2 / 100);
  return {lo, std::max(lo + 1, value_at_rank(n * 98 / 100))};
}

QuicklookGrid QuicklookSize(int width, int height, int max_side) {
  QuicklookGrid grid;
  grid.factor = std::max(1.0, static_cast<double>(std::max(width, height)) / max_side);
  grid.width = std::max(1, static_cast<int>(std::lround(width / grid.factor)));
  grid.height = std::max(1, static_cast<int>(std::lround(height / grid.factor)));
  return grid;
}

std::string EncodeQuicklook(const std::vector<const uint16_t*>& planes, const QuicklookGrid& grid,
                            const uint8_t* mask, int width, int height) {
  const int ow = grid.width;
  const int oh = grid.height;
  const double factor = grid.factor;
  const size_t plane = static_cast<size_t>(ow) * oh;
  cv::Mat image(oh, ow, CV_8UC3);
  for (size_t c = 0; c < 3; ++c) {
    const uint16_t* band = planes[planes.size() == 3 ? c : 0];
    const auto [lo, hi] = StretchRange(band, plane);
    for (int y = 0; y < oh; ++y) {
      cv::Vec3b* row = image.ptr<cv::Vec3b>(y);
      for (int x = 0; x < ow; ++x) {
        const double v = (band[static_cast<size_t>(y) * ow + x] - lo) / (hi - lo) * 255.0;
        row[x][2 - c] = static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));  // OpenCV is BGR
      }
    }
  }
  // Max-pool the mask onto the quick-look grid, then draw the outline of the change class.
  std::vector<uint8_t> small(plane, 0);
  for (int y = 0; y < height; ++y) {
    const int sy = std::min(oh - 1, static_cast<int>(y / factor));
    for (int x = 0; x < width; ++x) {
      if (mask[static_cast<size_t>(y) * width + x] == 1) {
        small[static_cast<size_t>(sy) * ow + std::min(ow - 1, static_cast<int>(x / factor))] = 1;
      }
    }
  }
  const auto at = [&](int x, int y) {
    return x >= 0 && y >= 0 && x < ow && y < oh && small[static_cast<size_t>(y) * ow + x] == 1;
  };
  for (int y = 0; y < oh; ++y) {
    for (int x = 0; x < ow; ++x) {
      if (at(x, y) && (!at(x - 1, y) || !at(x + 1, y) || !at(x, y - 1) || !at(x, y + 1))) {
        image.at<cv::Vec3b>(y, x) = cv::Vec3b(0, 0, 255);
      }
    }
  }
  std::vector<uchar> png;
  bool ok = false;
  try {
    ok = cv::imencode(".png", image, png);
  } catch (const cv::Exception& e) {
    throw ImageryError(ImageryError::Kind::kIo,
                       std::string("cannot encode the quick-look: ") + e.what());
  }
  if (!ok) {
    throw ImageryError(ImageryError::Kind::kIo, "cannot encode the quick-look");
  }
  return std::string(png.begin(), png.end());
}

}  // namespace warmpool::imagery
