#pragma once

// 8-connected components of a 0/1 mask with a minimum mapping unit (run-based union-find: memory
// grows with the number of runs, not pixels).

#include <cstdint>
#include <vector>

namespace warmpool::imagery {

// One connected change region, in pixel coordinates (inclusive bounds).
struct Region {
  int64_t area = 0;
  int x_min = 0, y_min = 0, x_max = 0, y_max = 0;
  double sum_x = 0, sum_y = 0;  // for the centroid: sum_x / area
};

// Labels the 8-connected components of mask == 1, sets the pixels of components with
// area < min_area to 0, and returns the kept components in raster order of their first pixel.
std::vector<Region> FilterComponents(uint8_t* mask, int width, int height, int64_t min_area);

}  // namespace warmpool::imagery
