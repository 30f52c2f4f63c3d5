#pragma once

// Pure rules for the paths an imagery task may touch: which GDAL network paths (/vsi...) are
// allowed, whether a local path stays lexically inside a root, and which raster formats a file's
// first bytes announce. No I/O here; data_root.h applies these to the file system.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warmpool::imagery {

// The worker flag (and environment variable) that names allowed GDAL network prefixes; refusals
// name it so an operator knows what to change.
inline constexpr const char* kAllowRemoteFlag = "--imagery-allow-remote";
inline constexpr const char* kAllowRemoteEnv = "WARMPOOL_IMAGERY_ALLOW_REMOTE";

// Checks and normalises --imagery-allow-remote values: each must start with "/vsi<name>/" and
// name more than the bare handler (e.g. "/vsis3/bucket/", "/vsicurl/https://data.example.org/");
// a missing trailing '/' is added so "https://host" cannot match "https://host.evil.org". Items
// may be comma-separated. Throws std::invalid_argument naming the flag and the bad value.
std::vector<std::string> ParseRemotePrefixes(const std::vector<std::string>& items);

// True for GDAL virtual file system paths ("/vsi...").
bool IsGdalVirtualPath(std::string_view path);

// Checks a /vsi path against the allowed prefixes: it must start with one of them and carry no
// "..", "." or empty segment, percent-encoded dot, backslash or control character after it (a
// URL's dot segments are resolved by curl, so "https://host/ok/../x" would leave the prefix).
// Throws ImageryError(kPermission) naming kAllowRemoteFlag when no prefix allows it.
void CheckRemotePath(const std::string& path, const std::vector<std::string>& allowed_prefixes);

// `path` made relative to `root` (both absolute and lexically normalised by this function);
// nullopt when it is not `root` or below it. "/data/../etc" is not below "/data".
std::optional<std::string> RelativeInside(const std::string& path, const std::string& root);

// What a raster file's first bytes say it is. Anything else is refused before GDAL sees it.
enum class RasterFormat { kUnknown, kGTiff, kPng, kJpeg, kJpeg2000, kVrt };

// Sniffs the format from up to the first 64 bytes: TIFF/BigTIFF byte-order marks, the PNG and
// JPEG signatures, a JP2 box or J2K codestream, or XML starting with <VRTDataset (after an
// optional UTF-8 BOM and white space).
RasterFormat SniffRasterFormat(std::string_view head);

// The GDAL driver that must open `format` ("GTiff", "PNG", "JPEG", "JP2OpenJPEG", "VRT"); COGs
// are read by GTiff. nullptr for kUnknown.
const char* GdalDriverFor(RasterFormat format);

}  // namespace warmpool::imagery
