#pragma once

// Raster I/O at the edge of the pipeline: GDAL for GeoTIFF/COG/JP2 and /vsi paths. OpenCV's
// imread is never used for imagery (it mangles multi-band 16-bit GeoTIFFs).

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "imagery/data_root.h"

namespace warmpool::imagery {

// Georeferencing copied from the `before` raster to every output.
struct GeoInfo {
  std::array<double, 6> geotransform = {0, 1, 0, 0, 0, 1};  // GDAL order
  bool has_geotransform = false;
  std::string crs_wkt;  // empty when the raster has no CRS
};

struct RasterInfo {
  int width = 0;
  int height = 0;
  int band_count = 0;
  std::string data_type;  // GDAL name of band 1's type, e.g. "UInt16"
  GeoInfo geo;
  std::optional<double> nodata;  // band 1's nodata value, when set
};

// Source row (or column) of output row i when `source_size` rows are resampled to `out_size`
// by nearest neighbour: the source pixel under output pixel i's centre, as GDAL's nearest.
// REQUIRES: 0 <= i < out_size, 1 <= out_size, 1 <= source_size.
inline int NearestSourceIndex(int i, int source_size, int out_size) {
  const int s = static_cast<int>((i + 0.5) * source_size / out_size);
  return s < source_size - 1 ? s : source_size - 1;
}

// Closes a GDALDatasetH (GDAL's handle is an opaque void*).
struct GdalDatasetCloser {
  void operator()(void* dataset) const;
};
using GdalDatasetPtr = std::unique_ptr<void, GdalDatasetCloser>;

// A read-only GDAL raster. Move-only. Reads are const but not thread-safe (one GDAL handle).
class RasterReader {
 public:
  // Opens `path` under `policy` (data_root.h): a local regular file inside the data root whose
  // first bytes say GeoTIFF/COG, PNG, JPEG, JPEG 2000 or VRT, opened by that GDAL driver alone
  // (a .tif holding VRT XML is a VRT); a VRT only after PinVrtSources (vrt_guard.h) accepted it,
  // its sources pinned to GeoTIFFs inside the root; a /vsi path only below an allowed prefix,
  // opened by the GTiff, PNG, JPEG or JP2OpenJPEG driver. External sidecars (.ovr, .aux.xml,
  // .msk) are never read. After the open, every file GDAL lists for the dataset must be one of
  // those checked, before any pixel is read. Throws ImageryError: what OpenInputFile throws,
  // kCorrupt when GDAL cannot open it as a raster or it is no allowed format, kPermission for a
  // refused VRT or file, kUnsupported for data types other than Byte, UInt16 and Int16
  // (negative Int16 values are read as 0).
  static RasterReader Open(const std::string& path, const PathPolicy& policy);
  // Unconfined local paths (library and test use): Open(path, PathPolicy{}).
  static RasterReader Open(const std::string& path) { return Open(path, PathPolicy{}); }

  const RasterInfo& info() const { return info_; }
  const std::string& path() const { return path_; }

  // Reads rows [row0, row0 + rows) of the 1-based `bands` as uint16, planar: band k of pixel
  // (r, c) lands at out[k * rows * width + r * width + c]. Throws ImageryError(kCorrupt) when GDAL
  // fails (truncated or damaged file); `out` is then unspecified.
  void ReadStrip(const std::vector<int>& bands, int row0, int rows, uint16_t* out) const;

  // True when the 1-based `band` has overviews (ReadDecimated then reads through GDAL).
  bool HasOverviews(int band) const;

  // Reads the whole raster resampled (nearest, NearestSourceIndex) to out_width x out_height,
  // planar as ReadStrip. Rasters with overviews are read through GDAL, which takes the samples
  // from the best overview (a few blocks, not the whole image, from a remote COG).
  void ReadDecimated(const std::vector<int>& bands, int out_width, int out_height,
                     uint16_t* out) const;

 private:
  RasterReader(std::string path, std::vector<UniqueFd> files, GdalDatasetPtr dataset,
               RasterInfo info)
      : path_(std::move(path)),
        files_(std::move(files)),
        dataset_(std::move(dataset)),
        info_(std::move(info)) {}

  // One GDAL read of rows [row0, row0 + rows), full width, into out_width x out_height (GDAL's
  // own resampling when the sizes differ). Throws ImageryError(kCorrupt): "cannot read
  // <what>'<path>'".
  void ReadWindow(const std::vector<int>& bands, int row0, int rows, int out_width, int out_height,
                  uint16_t* out, const std::string& what) const;

  std::string path_;
  std::vector<UniqueFd> files_;  // what GDAL reads through /proc/self/fd; outlives dataset_
  GdalDatasetPtr dataset_;
  RasterInfo info_;
};

// Writes a single-band uint8 GeoTIFF (tiled 256x256, DEFLATE) with `geo`'s geotransform and CRS;
// `nodata`, when set, is recorded as the band's nodata value. Throws ImageryError(kIo).
void WriteGeoTiffU8(const std::string& path, const uint8_t* pixels, int width, int height,
                    const GeoInfo& geo, std::optional<double> nodata,
                    const std::string& description);

// Writes a single-band uint16 GeoTIFF (tiled, DEFLATE + predictor 2) strip by strip: `fill(row0,
// rows, out)` writes rows [row0, row0 + rows) into out (rows * width values), so no full-size
// copy is needed. `scale` is recorded as the band's scale factor (physical value = pixel * scale)
// and `nodata` as its nodata value. Throws ImageryError(kIo).
void WriteGeoTiffU16Strips(const std::string& path, int width, int height, const GeoInfo& geo,
                           double scale, std::optional<double> nodata,
                           const std::string& description,
                           const std::function<void(int, int, uint16_t*)>& fill);

// Writes a multi-band uint16 GeoTIFF from a planar buffer (band b at b * width * height), tiled
// 256x256, DEFLATE + predictor 2 when `compress`, else uncompressed; `nodata` on every band.
void WriteGeoTiffPlanarU16(const std::string& path, const uint16_t* planar, int width, int height,
                           int band_count, const GeoInfo& geo, std::optional<double> nodata,
                           bool compress);

// Sets GDAL_NUM_THREADS (unless the environment sets it) and a bounded block cache, once.
void ConfigureGdal(int threads, int cache_mb);

// "EPSG:32633"-style authority code or the first 60 characters of the WKT; "" when none.
std::string DescribeCrs(const std::string& wkt);

// True when both WKT strings describe the same CRS (OSRIsSame), or both are empty.
bool SameCrs(const std::string& a, const std::string& b);

}  // namespace warmpool::imagery
