#include "worker/imagery/data_root.h"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "temp_dir.h"
#include "worker/imagery/imagery_error.h"

namespace warmpool::imagery {
namespace {

ImageryError::Kind KindOf(const std::string& path, const std::string& root) {
  try {
    ResolveDataPath(path, root);
  } catch (const ImageryError& e) {
    return e.kind();
  }
  FAIL("no exception for " << path);
  return ImageryError::Kind::kIo;
}

TEST_CASE("Paths inside the data root resolve; outside ones are PermissionError",
          "[imagery][data_root]") {
  testing::TempDir dir;
  const std::string root = dir.Sub("root");
  std::filesystem::create_directories(root + "/sub");
  std::ofstream(root + "/sub/a.tif") << "x";
  CHECK(ResolveDataPath(root + "/sub/a.tif", root) == root + "/sub/a.tif");
  CHECK(ResolveDataPath("sub/a.tif", root) == root + "/sub/a.tif");
  CHECK(ResolveDataPath(root + "/sub/new_output", root) == root + "/sub/new_output");
  CHECK(KindOf(root + "/../x.tif", root) == ImageryError::Kind::kPermission);
  CHECK(KindOf("../../etc/passwd", root) == ImageryError::Kind::kPermission);
  CHECK(KindOf("/etc/passwd", root) == ImageryError::Kind::kPermission);
  CHECK(KindOf(root + "x/a.tif", root) == ImageryError::Kind::kPermission);  // sibling prefix
  CHECK(KindOf("", root) == ImageryError::Kind::kInvalidArgument);
  // A symlink inside the root that points outside is outside.
  std::filesystem::create_directory_symlink("/etc", root + "/etc_link");
  CHECK(KindOf(root + "/etc_link/passwd", root) == ImageryError::Kind::kPermission);
}

TEST_CASE("GDAL network paths pass; archives are checked; other /vsi are refused",
          "[imagery][data_root]") {
  testing::TempDir dir;
  const std::string root = dir.path().string();
  CHECK(ResolveDataPath("/vsicurl/https://example.com/a.tif", root) ==
        "/vsicurl/https://example.com/a.tif");
  CHECK(ResolveDataPath("/vsis3/bucket/a.tif", root) == "/vsis3/bucket/a.tif");
  CHECK(ResolveDataPath("/vsiaz/container/a.tif", root) == "/vsiaz/container/a.tif");
  CHECK(ResolveDataPath("/vsizip/" + root + "/a.zip/b.tif", root) ==
        "/vsizip/" + root + "/a.zip/b.tif");
  CHECK(KindOf("/vsizip//etc/a.zip/b.tif", root) == ImageryError::Kind::kPermission);
  CHECK(KindOf("/vsistdin/", root) == ImageryError::Kind::kPermission);
}

}  // namespace
}  // namespace warmpool::imagery
