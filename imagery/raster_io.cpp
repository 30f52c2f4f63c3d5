#include "imagery/raster_io.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <vector>

#include <cpl_conv.h>
#include <cpl_error.h>
#include <cpl_string.h>
#include <gdal.h>
#include <ogr_srs_api.h>

#include "imagery/imagery_error.h"
#include "imagery/path_policy.h"
#include "imagery/vrt_guard.h"

namespace warmpool::imagery {
namespace {

// Silences GDAL's stderr printing for the scope; errors are read back with CPLGetLastErrorMsg.
class QuietGdalErrors {
 public:
  QuietGdalErrors() {
    CPLPushErrorHandler(CPLQuietErrorHandler);
    CPLErrorReset();
  }
  ~QuietGdalErrors() { CPLPopErrorHandler(); }
  QuietGdalErrors(const QuietGdalErrors&) = delete;
  QuietGdalErrors& operator=(const QuietGdalErrors&) = delete;
};

std::string LastGdalMessage() {
  const char* msg = CPLGetLastErrorMsg();
  return (msg != nullptr && *msg != '\0') ? std::string(msg) : std::string("unknown GDAL error");
}

void EnsureDriversRegistered() {
  static std::once_flag once;
  std::call_once(once, [] {
    GDALAllRegister();
    // Never look for sidecars (.ovr, .aux.xml, .msk, world files) next to a raster: a planted
    // one could name a file outside the data root. Internal overviews (COG) are still used.
    CPLSetConfigOption("GDAL_DISABLE_READDIR_ON_OPEN", "EMPTY_DIR");
    CPLSetConfigOption("GDAL_VRT_ENABLE_PYTHON", "NO");
    CPLSetConfigOption("VRT_SHARED_SOURCE", "0");
  });
}

constexpr size_t kMaxVrtBytes = size_t{4} << 20;

// What GDAL is given for one input, and every file it may list for it.
struct PinnedRaster {
  std::string path;              // for messages and results
  std::string gdal_name;         // "/proc/self/fd/N", a remote path, or VRT XML
  const char* driver = nullptr;  // the only driver allowed; nullptr = the remote set
  std::vector<UniqueFd> files;
  std::set<std::string> listed_ok;  // names GDALGetFileList may return
};

const char* const kRemoteDrivers[] = {"GTiff", "PNG", "JPEG", "JP2OpenJPEG", nullptr};

[[noreturn]] void NotARaster(const std::string& path) {
  throw ImageryError(
      ImageryError::Kind::kCorrupt,
      "cannot open '" + path +
          "' as a raster: it is not a GeoTIFF/COG, PNG, JPEG, JPEG 2000 or VRT file");
}

// A VRT source: a GeoTIFF inside the data root, given to GDAL as "GTIFF_DIR:1:/proc/self/fd/N"
// so only the GTiff driver opens it even if its bytes change after the check.
std::string PinVrtSource(const std::string& vrt_path, const std::string& filename, bool relative,
                         const PathPolicy& policy, PinnedRaster& pinned) {
  namespace fs = std::filesystem;
  if (IsGdalVirtualPath(filename)) {
    throw ImageryError(ImageryError::Kind::kPermission,
                       "VRT '" + vrt_path + "' refers to '" + filename +
                           "': VRT sources must be local GeoTIFF files inside the data root");
  }
  const fs::path named(filename);
  const std::string resolved = (relative || named.is_relative())
                                   ? (fs::path(vrt_path).parent_path() / named).string()
                                   : filename;
  InputFile source = OpenInputFile(resolved, policy);
  if (SniffRasterFormat(ReadPrefix(source.fd.get(), 64)) != RasterFormat::kGTiff) {
    throw ImageryError(ImageryError::Kind::kPermission,
                       "VRT '" + vrt_path + "' refers to '" + filename +
                           "', which is not a GeoTIFF (VRT sources are read as GeoTIFF only)");
  }
  const std::string gdal_name = "GTIFF_DIR:1:" + source.GdalPath();
  pinned.listed_ok.insert(gdal_name);
  pinned.listed_ok.insert(source.GdalPath());
  pinned.files.push_back(std::move(source.fd));
  return gdal_name;
}

PinnedRaster PinInput(const std::string& path, const PathPolicy& policy) {
  InputFile input = OpenInputFile(path, policy);
  PinnedRaster pinned;
  pinned.path = input.path;
  if (input.remote()) {
    pinned.gdal_name = input.path;
    return pinned;
  }
  const RasterFormat format = SniffRasterFormat(ReadPrefix(input.fd.get(), 64));
  if (format == RasterFormat::kUnknown) {
    NotARaster(path);
  }
  pinned.driver = GdalDriverFor(format);
  if (format == RasterFormat::kVrt) {
    const std::string xml = ReadPrefix(input.fd.get(), kMaxVrtBytes + 1);
    if (xml.size() > kMaxVrtBytes) {
      throw ImageryError(ImageryError::Kind::kUnsupported,
                         "VRT '" + path + "' is larger than 4 MiB");
    }
    pinned.gdal_name = PinVrtSources(xml, [&](const std::string& filename, bool relative) {
      return PinVrtSource(input.path, filename, relative, policy, pinned);
    });
    return pinned;
  }
  pinned.gdal_name = input.GdalPath();
  pinned.listed_ok.insert(pinned.gdal_name);
  pinned.files.push_back(std::move(input.fd));
  return pinned;
}

// Every file GDAL says the dataset uses must be one that was checked (sidecars included).
void CheckFileList(GDALDatasetH ds, const PinnedRaster& pinned, const PathPolicy& policy) {
  char** files = GDALGetFileList(ds);
  std::string stray;
  for (char** f = files; f != nullptr && *f != nullptr && stray.empty(); ++f) {
    const std::string name = *f;
    if (pinned.listed_ok.count(name) != 0) {
      continue;
    }
    if (pinned.driver == nullptr && IsGdalVirtualPath(name)) {
      try {
        CheckRemotePath(name, policy.remote_prefixes);
        continue;
      } catch (const ImageryError&) {
      }
    }
    stray = name;
  }
  CSLDestroy(files);
  if (!stray.empty()) {
    throw ImageryError(ImageryError::Kind::kPermission,
                       "raster '" + pinned.path + "' refers to '" + stray +
                           "', which was not checked against the data root");
  }
}

GdalDatasetPtr OpenPinned(const PinnedRaster& pinned, const char* const* open_options) {
  const char* const single[] = {pinned.driver, nullptr};
  return GdalDatasetPtr(GDALOpenEx(pinned.gdal_name.c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY,
                                   pinned.driver != nullptr ? single : kRemoteDrivers, open_options,
                                   nullptr));
}

void CheckBands(const RasterInfo& info, const std::string& path, const std::vector<int>& bands) {
  for (int b : bands) {
    if (b < 1 || b > info.band_count) {
      throw ImageryError(ImageryError::Kind::kInvalidArgument,
                         "band " + std::to_string(b) + " is out of range for '" + path +
                             "', which has bands 1.." + std::to_string(info.band_count));
    }
  }
}

// GDAL before 3.7.1 reads band-interleaved (PlanarConfiguration=Separate) multi-band GeoTIFFs
// wrongly on its multi-threaded path (GDAL_NUM_THREADS > 1): it logs "Bad value for
// ExtraSamples" from every decoding thread and frees memory still in use (OSGeo/gdal#7921 and
// #7963, seen here under AddressSanitizer with Debian 12's 3.6.2). Such files are read on one
// thread.
bool NeedsSingleThreadedRead(GDALDatasetH ds) {
  static const bool affected = std::atoi(GDALVersionInfo("VERSION_NUM")) < 3070100;
  if (!affected || GDALGetRasterCount(ds) < 2) {
    return false;
  }
  GDALDriverH driver = GDALGetDatasetDriver(ds);
  const char* interleave = GDALGetMetadataItem(ds, "INTERLEAVE", "IMAGE_STRUCTURE");
  return driver != nullptr && std::string(GDALGetDriverShortName(driver)) == "GTiff" &&
         interleave != nullptr && std::string(interleave) == "BAND";
}

struct OsrCloser {
  void operator()(void* srs) const { OSRDestroySpatialReference(srs); }
};
using OsrPtr = std::unique_ptr<void, OsrCloser>;

OsrPtr ParseSrs(const std::string& wkt) {
  OsrPtr srs(OSRNewSpatialReference(nullptr));
  if (OSRSetFromUserInput(srs.get(), wkt.c_str()) != OGRERR_NONE) {
    return nullptr;
  }
  return srs;
}

GdalDatasetPtr CreateGeoTiff(const std::string& path, int width, int height, GDALDataType type,
                             bool predictor, const GeoInfo& geo, int bands = 1,
                             bool compress = true) {
  EnsureDriversRegistered();
  GDALDriverH driver = GDALGetDriverByName("GTiff");
  const char* options[] = {"TILED=YES",
                           "BLOCKXSIZE=256",
                           "BLOCKYSIZE=256",
                           compress ? "COMPRESS=DEFLATE" : "COMPRESS=NONE",
                           (predictor && compress) ? "PREDICTOR=2" : "PREDICTOR=1",
                           "BIGTIFF=IF_SAFER",
                           "NUM_THREADS=2",  // parallel DEFLATE on write
                           "INTERLEAVE=PIXEL",
                           nullptr};
  GdalDatasetPtr ds(
      GDALCreate(driver, path.c_str(), width, height, bands, type, const_cast<char**>(options)));
  if (!ds) {
    throw ImageryError(ImageryError::Kind::kIo,
                       "cannot create '" + path + "': " + LastGdalMessage());
  }
  if (geo.has_geotransform) {
    double gt[6];
    for (int i = 0; i < 6; ++i) {
      gt[i] = geo.geotransform[i];
    }
    GDALSetGeoTransform(ds.get(), gt);
  }
  if (!geo.crs_wkt.empty()) {
    GDALSetProjection(ds.get(), geo.crs_wkt.c_str());
  }
  return ds;
}

// Flushes and closes a dataset being written; GDAL reports late write errors only here.
void CloseGeoTiff(GdalDatasetPtr& ds, const std::string& path) {
  ds.reset();
  if (CPLGetLastErrorType() >= CE_Failure) {
    throw ImageryError(ImageryError::Kind::kIo,
                       "cannot finish '" + path + "': " + LastGdalMessage());
  }
}

void WriteBand(GdalDatasetPtr ds, const std::string& path, const void* pixels, int width,
               int height, GDALDataType type, double scale, std::optional<double> nodata,
               const std::string& description) {
  GDALRasterBandH band = GDALGetRasterBand(ds.get(), 1);
  if (nodata) {
    GDALSetRasterNoDataValue(band, *nodata);
  }
  if (scale != 1.0) {
    GDALSetRasterScale(band, scale);
    GDALSetRasterOffset(band, 0.0);
  }
  GDALSetDescription(band, description.c_str());
  const CPLErr err = GDALRasterIO(band, GF_Write, 0, 0, width, height, const_cast<void*>(pixels),
                                  width, height, type, 0, 0);
  if (err != CE_None) {
    throw ImageryError(ImageryError::Kind::kIo,
                       "cannot write '" + path + "': " + LastGdalMessage());
  }
  CloseGeoTiff(ds, path);
}

}  // namespace

void GdalDatasetCloser::operator()(void* dataset) const {
  if (dataset != nullptr) {
    GDALClose(dataset);
  }
}

RasterReader RasterReader::Open(const std::string& path, const PathPolicy& policy) {
  EnsureDriversRegistered();
  PinnedRaster pinned = PinInput(path, policy);
  QuietGdalErrors quiet;
  GdalDatasetPtr ds = OpenPinned(pinned, nullptr);
  if (!ds) {
    throw ImageryError(ImageryError::Kind::kCorrupt,
                       "cannot open '" + path + "' as a raster: " + LastGdalMessage());
  }
  if (NeedsSingleThreadedRead(ds.get())) {
    const char* const single_thread[] = {"NUM_THREADS=1", nullptr};
    ds = OpenPinned(pinned, single_thread);
    if (!ds) {
      throw ImageryError(ImageryError::Kind::kCorrupt,
                         "cannot open '" + path + "' as a raster: " + LastGdalMessage());
    }
  }
  CheckFileList(ds.get(), pinned, policy);
  RasterInfo info;
  info.width = GDALGetRasterXSize(ds.get());
  info.height = GDALGetRasterYSize(ds.get());
  info.band_count = GDALGetRasterCount(ds.get());
  if (info.band_count < 1 || info.width < 1 || info.height < 1) {
    throw ImageryError(ImageryError::Kind::kCorrupt, "raster '" + path + "' has no pixels");
  }
  GDALRasterBandH band1 = GDALGetRasterBand(ds.get(), 1);
  const GDALDataType type = GDALGetRasterDataType(band1);
  info.data_type = GDALGetDataTypeName(type);
  if (type != GDT_Byte && type != GDT_UInt16 && type != GDT_Int16) {
    throw ImageryError(ImageryError::Kind::kUnsupported,
                       "raster '" + path + "' has data type " + info.data_type +
                           "; supported: Byte, UInt16, Int16 (convert with gdal_translate -ot "
                           "UInt16 -scale)");
  }
  double gt[6];
  if (GDALGetGeoTransform(ds.get(), gt) == CE_None) {
    info.geo.has_geotransform = true;
    for (int i = 0; i < 6; ++i) {
      info.geo.geotransform[i] = gt[i];
    }
  }
  const char* wkt = GDALGetProjectionRef(ds.get());
  info.geo.crs_wkt = wkt != nullptr ? wkt : "";
  int has_nodata = 0;
  const double nodata = GDALGetRasterNoDataValue(band1, &has_nodata);
  if (has_nodata) {
    info.nodata = nodata;
  }
  return RasterReader(pinned.path, std::move(pinned.files), std::move(ds), std::move(info));
}

void RasterReader::ReadWindow(const std::vector<int>& bands, int row0, int rows, int out_width,
                              int out_height, uint16_t* out, const std::string& what) const {
  QuietGdalErrors quiet;
  const CPLErr err = GDALDatasetRasterIO(
      dataset_.get(), GF_Read, 0, row0, info_.width, rows, out, out_width, out_height, GDT_UInt16,
      static_cast<int>(bands.size()), const_cast<int*>(bands.data()), 0, 0, 0);
  if (err != CE_None) {
    throw ImageryError(ImageryError::Kind::kCorrupt,
                       "cannot read " + what + "'" + path_ + "': " + LastGdalMessage());
  }
}

void RasterReader::ReadStrip(const std::vector<int>& bands, int row0, int rows,
                             uint16_t* out) const {
  CheckBands(info_, path_, bands);
  ReadWindow(bands, row0, rows, info_.width, rows, out,
             "rows " + std::to_string(row0) + ".." + std::to_string(row0 + rows - 1) + " of ");
}

bool RasterReader::HasOverviews(int band) const {
  return GDALGetOverviewCount(GDALGetRasterBand(dataset_.get(), band)) > 0;
}

void RasterReader::ReadDecimated(const std::vector<int>& bands, int out_width, int out_height,
                                 uint16_t* out) const {
  CheckBands(info_, path_, bands);
  const int width = info_.width;
  const int height = info_.height;
  if (bands.empty() || out_width < 1 || out_height < 1) {
    return;  // nothing to read
  }
  if (out_width == width && out_height == height) {
    return ReadStrip(bands, 0, height, out);
  }
  if (HasOverviews(bands[0])) {
    return ReadWindow(bands, 0, height, out_width, out_height, out, "");
  }
  // Without overviews, GDAL's own decimated read walks the image once per band through the
  // block cache, so each compressed tile is decoded once per band when the image outruns the
  // cache: 3-7x the time of a full read of a 4096^2 4-band DEFLATE GeoTIFF
  // (bench/imagery/sample_read_bench, with a 128 or a 64 MB cache). Here the needed rows are read
  // with all bands at once, one block row (a window) at a time, so each tile is decoded once, and
  // the sampled columns are picked in memory.
  int block_width = 0, block_height = 0;
  GDALGetBlockSize(GDALGetRasterBand(dataset_.get(), bands[0]), &block_width, &block_height);
  const size_t row_values = static_cast<size_t>(width) * bands.size();
  constexpr size_t kWindowBytes = size_t{16} << 20;  // bounds the window for one-strip rasters
  const int max_rows = static_cast<int>(std::clamp<size_t>(
      kWindowBytes / (row_values * sizeof(uint16_t)), 1, static_cast<size_t>(height)));
  const int window_rows = std::clamp(block_height, 1, max_rows);
  std::vector<int> source_cols(out_width);
  for (int c = 0; c < out_width; ++c) {
    source_cols[c] = NearestSourceIndex(c, width, out_width);
  }
  std::vector<uint16_t> window(row_values * window_rows);
  const size_t out_plane = static_cast<size_t>(out_width) * out_height;
  int r = 0;
  while (r < out_height) {
    // Output rows [r, r_end) have their source rows in one window-aligned run of rows.
    const int first = NearestSourceIndex(r, height, out_height);
    const int window_end = std::min(height, (first / window_rows + 1) * window_rows);
    int r_end = r + 1;
    while (r_end < out_height && NearestSourceIndex(r_end, height, out_height) < window_end) {
      ++r_end;
    }
    // From the window's first row: the block is decoded whole anyway.
    const int window_start = first / window_rows * window_rows;
    const int last = NearestSourceIndex(r_end - 1, height, out_height);
    const int rows = last - window_start + 1;
    ReadStrip(bands, window_start, rows, window.data());
    const size_t window_plane = static_cast<size_t>(rows) * width;
    for (size_t k = 0; k < bands.size(); ++k) {
      for (int y = r; y < r_end; ++y) {
        const uint16_t* src =
            window.data() + k * window_plane +
            static_cast<size_t>(NearestSourceIndex(y, height, out_height) - window_start) * width;
        uint16_t* dst = out + k * out_plane + static_cast<size_t>(y) * out_width;
        for (int c = 0; c < out_width; ++c) {
          dst[c] = src[source_cols[c]];
        }
      }
    }
    r = r_end;
  }
}

void WriteGeoTiffU8(const std::string& path, const uint8_t* pixels, int width, int height,
                    const GeoInfo& geo, std::optional<double> nodata,
                    const std::string& description) {
  QuietGdalErrors quiet;
  WriteBand(CreateGeoTiff(path, width, height, GDT_Byte, false, geo), path, pixels, width, height,
            GDT_Byte, 1.0, nodata, description);
}

void WriteGeoTiffU16Strips(const std::string& path, int width, int height, const GeoInfo& geo,
                           double scale, std::optional<double> nodata,
                           const std::string& description,
                           const std::function<void(int, int, uint16_t*)>& fill) {
  QuietGdalErrors quiet;
  GdalDatasetPtr ds = CreateGeoTiff(path, width, height, GDT_UInt16, true, geo);
  GDALRasterBandH band = GDALGetRasterBand(ds.get(), 1);
  if (nodata) {
    GDALSetRasterNoDataValue(band, *nodata);
  }
  GDALSetRasterScale(band, scale);
  GDALSetRasterOffset(band, 0.0);
  GDALSetDescription(band, description.c_str());
  constexpr int kRows = 256;  // one tile row
  std::vector<uint16_t> strip(static_cast<size_t>(kRows) * width);
  for (int row0 = 0; row0 < height; row0 += kRows) {
    const int rows = std::min(kRows, height - row0);
    fill(row0, rows, strip.data());
    if (GDALRasterIO(band, GF_Write, 0, row0, width, rows, strip.data(), width, rows, GDT_UInt16, 0,
                     0) != CE_None) {
      throw ImageryError(ImageryError::Kind::kIo,
                         "cannot write '" + path + "': " + LastGdalMessage());
    }
  }
  CloseGeoTiff(ds, path);
}

void WriteGeoTiffPlanarU16(const std::string& path, const uint16_t* planar, int width, int height,
                           int band_count, const GeoInfo& geo, std::optional<double> nodata,
                           bool compress) {
  QuietGdalErrors quiet;
  GdalDatasetPtr ds =
      CreateGeoTiff(path, width, height, GDT_UInt16, true, geo, band_count, compress);
  for (int b = 1; b <= band_count; ++b) {
    GDALRasterBandH band = GDALGetRasterBand(ds.get(), b);
    if (nodata) {
      GDALSetRasterNoDataValue(band, *nodata);
    }
  }
  const CPLErr err =
      GDALDatasetRasterIO(ds.get(), GF_Write, 0, 0, width, height, const_cast<uint16_t*>(planar),
                          width, height, GDT_UInt16, band_count, nullptr, 0, 0, 0);
  if (err != CE_None) {
    throw ImageryError(ImageryError::Kind::kIo,
                       "cannot write '" + path + "': " + LastGdalMessage());
  }
  CloseGeoTiff(ds, path);
}

void ConfigureGdal(int threads, int cache_mb) {
  static std::once_flag once;
  std::call_once(once, [&] {
    EnsureDriversRegistered();
    if (std::getenv("GDAL_NUM_THREADS") == nullptr) {
      CPLSetConfigOption("GDAL_NUM_THREADS", std::to_string(threads).c_str());
    }
    if (std::getenv("GDAL_CACHEMAX") == nullptr) {
      GDALSetCacheMax64(static_cast<GIntBig>(cache_mb) * 1024 * 1024);
    }
  });
}

std::string DescribeCrs(const std::string& wkt) {
  if (wkt.empty()) {
    return "";
  }
  OsrPtr srs = ParseSrs(wkt);
  if (srs) {
    OSRAutoIdentifyEPSG(srs.get());
    const char* name = OSRGetAuthorityName(srs.get(), nullptr);
    const char* code = OSRGetAuthorityCode(srs.get(), nullptr);
    if (name != nullptr && code != nullptr) {
      return std::string(name) + ":" + code;
    }
  }
  return wkt.substr(0, 60);
}

bool SameCrs(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) {
    return a.empty() && b.empty();
  }
  if (a == b) {
    return true;
  }
  OsrPtr sa = ParseSrs(a);
  OsrPtr sb = ParseSrs(b);
  if (!sa || !sb) {
    return false;
  }
  const char* options[] = {"IGNORE_DATA_AXIS_TO_SRS_AXIS_MAPPING=YES", nullptr};
  return OSRIsSameEx(sa.get(), sb.get(), options) != 0;
}

}  // namespace warmpool::imagery
