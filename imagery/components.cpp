#include "imagery/components.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace warmpool::imagery {
namespace {

struct Run {
  int32_t row;
  int32_t start;  // inclusive
  int32_t end;    // inclusive
};

uint32_t Find(std::vector<uint32_t>& parent, uint32_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

void Unite(std::vector<uint32_t>& parent, uint32_t a, uint32_t b) {
  a = Find(parent, a);
  b = Find(parent, b);
  if (a < b) {
    parent[b] = a;
  } else if (b < a) {
    parent[a] = b;
  }
}

// Runs of non-zero pixels, row by row, left to right; row_begin[y] is the first run of row y
// (row_begin[height] = the run count).
struct MaskRuns {
  std::vector<Run> runs;
  std::vector<size_t> row_begin;
};

MaskRuns FindRuns(const uint8_t* mask, int width, int height) {
  MaskRuns m;
  m.row_begin.assign(static_cast<size_t>(height) + 1, 0);
  for (int y = 0; y < height; ++y) {
    m.row_begin[y] = m.runs.size();
    const uint8_t* row = mask + static_cast<size_t>(y) * width;
    int x = 0;
    while (x < width) {
      // Skip zeros quickly, 8 bytes at a time.
      while (x + 8 <= width) {
        uint64_t word;
        std::memcpy(&word, row + x, sizeof(word));
        if (word != 0) {
          break;
        }
        x += 8;
      }
      while (x < width && row[x] == 0) {
        ++x;
      }
      if (x >= width) {
        break;
      }
      const int start = x;
      while (x < width && row[x] != 0) {
        ++x;
      }
      m.runs.push_back({y, start, x - 1});
    }
  }
  m.row_begin[height] = m.runs.size();
  return m;
}

// Union-find parents of the runs, 8-connected runs of adjacent rows united.
std::vector<uint32_t> UniteTouchingRuns(const MaskRuns& m, int height) {
  const std::vector<Run>& runs = m.runs;
  std::vector<uint32_t> parent(runs.size());
  std::iota(parent.begin(), parent.end(), 0u);
  for (int y = 1; y < height; ++y) {
    size_t p = m.row_begin[y - 1];
    const size_t p_end = m.row_begin[y];
    for (size_t c = m.row_begin[y]; c < m.row_begin[y + 1]; ++c) {
      // Runs of the previous row are sorted; 8-connectivity: overlap of [s-1, e+1].
      while (p < p_end && runs[p].end < runs[c].start - 1) {
        ++p;
      }
      for (size_t q = p; q < p_end && runs[q].start <= runs[c].end + 1; ++q) {
        Unite(parent, static_cast<uint32_t>(c), static_cast<uint32_t>(q));
      }
    }
  }
  return parent;
}

// Every component's region, in the order of its first run (raster order); index_of_root maps a
// root run to its region.
std::vector<Region> RegionsOfRuns(const std::vector<Run>& runs, std::vector<uint32_t>& parent,
                                  std::vector<int64_t>& index_of_root) {
  index_of_root.assign(runs.size(), -1);
  std::vector<Region> regions;
  for (size_t i = 0; i < runs.size(); ++i) {
    const uint32_t root = Find(parent, static_cast<uint32_t>(i));
    if (index_of_root[root] < 0) {
      index_of_root[root] = static_cast<int64_t>(regions.size());
      Region r;
      r.x_min = runs[i].start;
      r.x_max = runs[i].end;
      r.y_min = r.y_max = runs[i].row;
      regions.push_back(r);
    }
    Region& r = regions[static_cast<size_t>(index_of_root[root])];
    const Run& run = runs[i];
    const int64_t len = run.end - run.start + 1;
    r.area += len;
    r.x_min = std::min(r.x_min, run.start);
    r.x_max = std::max(r.x_max, run.end);
    r.y_min = std::min(r.y_min, run.row);
    r.y_max = std::max(r.y_max, run.row);
    r.sum_x += static_cast<double>(len) * (run.start + run.end) * 0.5;
    r.sum_y += static_cast<double>(len) * run.row;
  }
  return regions;
}

}  // namespace

std::vector<Region> FilterComponents(uint8_t* mask, int width, int height, int64_t min_area) {
  const MaskRuns m = FindRuns(mask, width, height);
  const std::vector<Run>& runs = m.runs;
  std::vector<uint32_t> parent = UniteTouchingRuns(m, height);
  std::vector<int64_t> index_of_root;
  const std::vector<Region> regions = RegionsOfRuns(runs, parent, index_of_root);

  std::vector<uint8_t> keep(regions.size());
  for (size_t k = 0; k < regions.size(); ++k) {
    keep[k] = regions[k].area >= min_area ? 1 : 0;
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const int64_t k = index_of_root[Find(parent, static_cast<uint32_t>(i))];
    if (!keep[static_cast<size_t>(k)]) {
      std::fill_n(mask + static_cast<size_t>(runs[i].row) * width + runs[i].start,
                  runs[i].end - runs[i].start + 1, uint8_t{0});
    }
  }
  std::vector<Region> kept;
  for (size_t k = 0; k < regions.size(); ++k) {
    if (keep[k]) {
      kept.push_back(regions[k]);
    }
  }
  return kept;
}

}  // namespace warmpool::imagery
