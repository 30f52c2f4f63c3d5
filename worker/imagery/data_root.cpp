#include "worker/imagery/data_root.h"

#include <array>
#include <filesystem>
#include <string_view>

#include "worker/imagery/imagery_error.h"

namespace warmpool::imagery {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 10> kNetworkPrefixes = {
    "/vsicurl/", "/vsis3/",    "/vsiaz/",   "/vsiadls/",    "/vsigs/",
    "/vsioss/",  "/vsiswift/", "/vsihdfs/", "/vsiwebhdfs/", "/vsimem/"};
constexpr std::array<std::string_view, 5> kArchivePrefixes = {"/vsizip/", "/vsitar/", "/vsigzip/",
                                                              "/vsi7z/", "/vsirar/"};

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// True when `inner` equals `root` or is below it, comparing whole path components.
bool IsWithin(const fs::path& inner, const fs::path& root) {
  auto i = inner.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++i) {
    if (r->empty()) {
      continue;  // trailing separator
    }
    if (i == inner.end() || *i != *r) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string ResolveDataPath(const std::string& path, const std::string& data_root) {
  if (path.empty()) {
    throw ImageryError(ImageryError::Kind::kInvalidArgument, "raster path is empty");
  }
  if (StartsWith(path, "/vsi")) {
    for (std::string_view prefix : kNetworkPrefixes) {
      if (StartsWith(path, prefix)) {
        return path;
      }
    }
    for (std::string_view prefix : kArchivePrefixes) {
      if (StartsWith(path, prefix)) {
        // "/vsizip//data/a.zip/x.tif" and "/vsizip/{/data/a.zip}/x.tif" both wrap a path; check
        // the wrapped part as a whole (it resolves to the archive's parent folders).
        std::string inner = path.substr(prefix.size());
        if (!inner.empty() && inner.front() == '{') {
          inner = inner.substr(
              1, inner.find('}') == std::string::npos ? std::string::npos : inner.find('}') - 1);
        }
        if (inner.empty()) {
          break;
        }
        if (!StartsWith(inner, "/vsi") && inner.front() != '/') {
          inner = "/" + inner;
        }
        ResolveDataPath(inner, data_root);
        return path;
      }
    }
    throw ImageryError(ImageryError::Kind::kPermission,
                       "GDAL path '" + path +
                           "' is not allowed: use a network /vsi path (/vsicurl/, /vsis3/, "
                           "/vsiaz/, ...) or an archive inside the data root");
  }
  if (data_root.empty()) {
    return fs::weakly_canonical(fs::absolute(path)).string();
  }
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(data_root), ec);
  if (ec) {
    throw ImageryError(ImageryError::Kind::kPermission,
                       "data root '" + data_root + "' cannot be resolved: " + ec.message());
  }
  fs::path candidate(path);
  if (candidate.is_relative()) {
    candidate = root / candidate;
  }
  const fs::path resolved = fs::weakly_canonical(candidate, ec);
  if (ec || !IsWithin(resolved, root)) {
    throw ImageryError(ImageryError::Kind::kPermission,
                       "path '" + path + "' is outside the data root '" + root.string() + "'");
  }
  return resolved.string();
}

}  // namespace warmpool::imagery
