#pragma once

#include <string>

namespace warmpool::imagery {

// Checks that a raster or output path may be used by a task.
// - Local paths are resolved (relative ones against `data_root`, symlinks followed) and must lie
//   inside `data_root`; the resolved path is returned.
// - Network GDAL paths (/vsicurl/, /vsis3/, /vsiaz/, /vsiadls/, /vsigs/, /vsioss/, /vsiswift/,
//   /vsihdfs/, /vsiwebhdfs/) and /vsimem/ are returned unchanged.
// - Archive wrappers (/vsizip/, /vsitar/, /vsigzip/, /vsi7z/, /vsirar/) are allowed when the path
//   they wrap passes this check; any other /vsi prefix is rejected.
// An empty `data_root` disables the check for local paths (library and test use only; the worker
// always sets one).
// Throws ImageryError(kPermission) naming the path and the root; kInvalidArgument for an empty
// path. Pure apart from reading the file system to resolve symlinks.
std::string ResolveDataPath(const std::string& path, const std::string& data_root);

}  // namespace warmpool::imagery
