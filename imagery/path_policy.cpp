#include "imagery/path_policy.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "common/split.h"
#include "imagery/imagery_error.h"

namespace warmpool::imagery {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// True when the part of a remote path after its allowed prefix could step out of it.
bool HasUnsafeRemoteTail(std::string_view tail) {
  // "https://host/...": the scheme's "//" is no empty segment.
  const size_t scheme_end = tail.find("://");
  if (scheme_end != std::string_view::npos && scheme_end > 0 &&
      tail.substr(0, scheme_end).find_first_not_of("abcdefghijklmnopqrstuvwxyz+.-") ==
          std::string_view::npos) {
    tail.remove_prefix(scheme_end + 3);
  }
  for (const char c : tail) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\') {
      return true;
    }
  }
  if (Lower(tail).find("%2e") != std::string::npos) {
    return true;  // curl does not decode it, but a server or a later hop may
  }
  // Segments up to a query string: "", "." or ".." could be normalised away.
  const std::string_view path_part = tail.substr(0, tail.find('?'));
  size_t start = 0;
  while (start <= path_part.size()) {
    size_t slash = path_part.find('/', start);
    if (slash == std::string_view::npos) slash = path_part.size();
    const std::string_view segment = path_part.substr(start, slash - start);
    const bool last = slash == path_part.size();
    if (segment == "." || segment == ".." || (segment.empty() && !last)) {
      return true;
    }
    start = slash + 1;
  }
  return false;
}

}  // namespace

std::vector<std::string> ParseRemotePrefixes(const std::vector<std::string>& items) {
  std::vector<std::string> prefixes;
  for (const std::string& item : items) {
    for (std::string_view part : SplitOnComma(item)) {
      if (part.empty()) {
        continue;
      }
      std::string prefix(part);
      const size_t handler_end = prefix.find('/', 4);
      if (!StartsWith(prefix, "/vsi") || handler_end == std::string::npos ||
          handler_end + 1 >= prefix.size()) {
        throw std::invalid_argument(std::string(kAllowRemoteFlag) + ": '" + prefix +
                                    "' must be a GDAL network prefix naming a location, e.g. "
                                    "/vsis3/bucket/ or /vsicurl/https://data.example.org/");
      }
      if (prefix.back() != '/') {
        prefix += '/';
      }
      if (HasUnsafeRemoteTail(prefix.substr(handler_end + 1, prefix.size() - handler_end - 2))) {
        throw std::invalid_argument(std::string(kAllowRemoteFlag) + ": '" + prefix +
                                    "' has a '.', '..' or empty segment or an escaped dot");
      }
      prefixes.push_back(std::move(prefix));
    }
  }
  return prefixes;
}

bool IsGdalVirtualPath(std::string_view path) { return StartsWith(path, "/vsi"); }

void CheckRemotePath(const std::string& path, const std::vector<std::string>& allowed_prefixes) {
  for (const std::string& prefix : allowed_prefixes) {
    if (StartsWith(path, prefix) && !HasUnsafeRemoteTail(path.substr(prefix.size()))) {
      return;
    }
  }
  throw ImageryError(ImageryError::Kind::kPermission,
                     "GDAL path '" + path + "' is not allowed: " +
                         (allowed_prefixes.empty()
                              ? std::string("this worker reads no network or /vsi paths; start it "
                                            "with ") +
                                    kAllowRemoteFlag + " PREFIX to allow some"
                              : std::string("it is not below a prefix named by ") +
                                    kAllowRemoteFlag + " (or has '.', '..' or empty segments)"));
}

std::optional<std::string> RelativeInside(const std::string& path, const std::string& root) {
  namespace fs = std::filesystem;
  const fs::path p = fs::path(path).lexically_normal();
  const fs::path r = fs::path(root).lexically_normal();
  if (!p.is_absolute() || !r.is_absolute()) {
    return std::nullopt;
  }
  const fs::path rel = p.lexically_relative(r);
  if (rel.empty()) {
    return std::nullopt;
  }
  if (rel == ".") {
    return std::string();
  }
  if (*rel.begin() == "..") {
    return std::nullopt;
  }
  return rel.string();
}

RasterFormat SniffRasterFormat(std::string_view head) {
  const auto starts = [&](std::string_view magic) { return StartsWith(head, magic); };
  using namespace std::string_view_literals;
  if (starts("II*\0"sv) || starts("MM\0*"sv) || starts("II+\0"sv) || starts("MM\0+"sv)) {
    return RasterFormat::kGTiff;
  }
  if (starts("\x89PNG\r\n\x1a\n"sv)) {
    return RasterFormat::kPng;
  }
  if (starts("\xff\xd8\xff"sv)) {
    return RasterFormat::kJpeg;
  }
  if (starts("\0\0\0\x0cjP  \r\n\x87\n"sv) || starts("\xff\x4f\xff\x51"sv)) {
    return RasterFormat::kJpeg2000;
  }
  std::string_view text = head;
  if (StartsWith(text, "\xef\xbb\xbf")) {
    text.remove_prefix(3);
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && StartsWith(text.substr(first), "<VRTDataset")) {
    return RasterFormat::kVrt;
  }
  return RasterFormat::kUnknown;
}

const char* GdalDriverFor(RasterFormat format) {
  switch (format) {
    case RasterFormat::kGTiff:
      return "GTiff";
    case RasterFormat::kPng:
      return "PNG";
    case RasterFormat::kJpeg:
      return "JPEG";
    case RasterFormat::kJpeg2000:
      return "JP2OpenJPEG";
    case RasterFormat::kVrt:
      return "VRT";
    default:
      return nullptr;
  }
}

}  // namespace warmpool::imagery
