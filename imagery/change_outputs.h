#pragma once

// Products as bytes: regions as JSON/GeoJSON and the quick-look PNG. Writing them is the
// caller's (change_job.cpp, through OutputFile: never through a planted symlink).

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "imagery/components.h"
#include "imagery/raster_io.h"

namespace warmpool::imagery {

// Map-coordinate bounding box [min_x, min_y, max_x, max_y] of a region's pixel edges; the pixel
// box itself when `geo` has no geotransform.
std::array<double, 4> MapBounds(const Region& r, const GeoInfo& geo);

// Area of one pixel in map units squared (|det| of the geotransform), 1 without one.
double PixelArea(const GeoInfo& geo);

// Regions as result-JSON objects, largest first, at most `limit` of them:
// {id, area_px, area_map, pixel_bbox [x0,y0,x1,y1] (inclusive), map_bbox, centroid_px}.
nlohmann::json RegionsJson(const std::vector<Region>& regions, const GeoInfo& geo, size_t limit);

// A GeoJSON FeatureCollection of the regions' map bounding boxes (Polygon features with the
// properties above), with a "crs" member naming the raster's CRS; the text ends with a newline.
std::string RegionsGeoJson(const std::vector<Region>& regions, const GeoInfo& geo,
                           const std::string& crs_name);

// The quick-look's stretch of one band: its 2nd and 98th percentile over the non-zero values
// (the values at ranks n * 2 / 100 and n * 98 / 100 of them sorted), hi at least lo + 1; {0, 1}
// when every value is 0.
std::pair<double, double> StretchRange(const uint16_t* band, size_t count);

// The quick-look's grid: width x height reduced by `factor` so the longer side is at most
// max_side (factor 1 when it already is).
struct QuicklookGrid {
  int width = 0;
  int height = 0;
  double factor = 1.0;
};
QuicklookGrid QuicklookSize(int width, int height, int max_side);

// A PNG of `after` on `grid` from `planes` (1 or 3 planes of grid.width x grid.height values:
// grey, or red, green, blue; each stretched between its 2nd and 98th percentile), with the
// outline of the change mask (value 1 in the width x height mask) drawn in red: the file's bytes.
// Throws ImageryError(kIo) when OpenCV cannot encode it.
std::string EncodeQuicklook(const std::vector<const uint16_t*>& planes, const QuicklookGrid& grid,
                            const uint8_t* mask, int width, int height);

}  // namespace warmpool::imagery
