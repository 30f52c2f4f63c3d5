// The file-system confinement primitives (data_root.h) and the pure path rules (path_policy.h).
#include "imagery/data_root.h"

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "imagery/imagery_error.h"
#include "imagery/path_policy.h"
#include "tests/support/temp_dir.h"

namespace warmpool::imagery {
namespace {

namespace fs = std::filesystem;
using Kind = ImageryError::Kind;

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

template <typename F>
std::string ErrorOf(F&& f, Kind* kind = nullptr) {
  try {
    f();
  } catch (const ImageryError& e) {
    if (kind != nullptr) *kind = e.kind();
    return e.what();
  }
  return "";
}

Kind InputKind(const std::string& path, const std::string& root) {
  Kind kind = Kind::kIo;
  const std::string error = ErrorOf([&] { OpenInputFile(path, PathPolicy{root, {}}); }, &kind);
  INFO(path << ": " << error);
  REQUIRE_FALSE(error.empty());
  return kind;
}

// A data root with a file inside and a secret outside it.
struct Roots {
  testing::TempDir dir;
  std::string root = dir.Sub("root");
  std::string outside = dir.Sub("outside");
  Roots() {
    fs::create_directories(root + "/sub");
    fs::create_directories(outside);
    std::ofstream(root + "/sub/a.tif") << "inside";
    std::ofstream(outside + "/secret.tif") << "secret";
  }
};

TEST_CASE("Inputs open inside the data root, `..`, absolute and symlinked escapes are refused",
          "[imagery][data_root]") {
  Roots r;
  const InputFile in = OpenInputFile(r.root + "/sub/a.tif", PathPolicy{r.root, {}});
  CHECK(in.path == fs::canonical(r.root + "/sub/a.tif").string());
  CHECK_FALSE(in.remote());
  CHECK(in.GdalPath() == "/proc/self/fd/" + std::to_string(in.fd.get()));
  CHECK(Slurp(in.GdalPath()) == "inside");
  CHECK(OpenInputFile("sub/a.tif", PathPolicy{r.root, {}}).path == in.path);
  CHECK(OpenInputFile("sub/../sub/a.tif", PathPolicy{r.root, {}}).path == in.path);

  CHECK(InputKind(r.root + "/../outside/secret.tif", r.root) == Kind::kPermission);
  CHECK(InputKind("../outside/secret.tif", r.root) == Kind::kPermission);
  CHECK(InputKind("sub/../../outside/secret.tif", r.root) == Kind::kPermission);
  CHECK(InputKind(r.outside + "/secret.tif", r.root) == Kind::kPermission);
  CHECK(InputKind(r.root + "x/a.tif", r.root) == Kind::kPermission);  // sibling prefix
  CHECK(InputKind("", r.root) == Kind::kInvalidArgument);
  CHECK(InputKind(r.root + "/nope.tif", r.root) == Kind::kNotFound);
  // Symlinks: a file link and a directory link out of the root are outside; one that stays
  // inside is followed.
  fs::create_symlink(r.outside + "/secret.tif", r.root + "/link.tif");
  fs::create_directory_symlink(r.outside, r.root + "/dir_link");
  fs::create_symlink(r.root + "/sub/a.tif", r.root + "/inner_link.tif");
  CHECK(InputKind(r.root + "/link.tif", r.root) == Kind::kPermission);
  CHECK(InputKind(r.root + "/dir_link/secret.tif", r.root) == Kind::kPermission);
  // Lexically inside, physically (dir_link/..) outside.
  CHECK(InputKind("dir_link/../outside/secret.tif", r.root) == Kind::kPermission);
  CHECK(OpenInputFile(r.root + "/inner_link.tif", PathPolicy{r.root, {}}).path == in.path);
}

TEST_CASE("Inputs must be regular files: a FIFO is refused at once, never waited on",
          "[imagery][data_root]") {
  Roots r;
  REQUIRE(mkfifo((r.root + "/pipe.tif").c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  CHECK(InputKind(r.root + "/pipe.tif", r.root) == Kind::kInvalidArgument);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK_THAT(ErrorOf([&] {
               OpenInputFile(r.root + "/pipe.tif", PathPolicy{r.root, {}});
             }),
             Catch::Contains("a FIFO"));
  CHECK(InputKind(r.root + "/sub", r.root) == Kind::kInvalidArgument);
  CHECK(InputKind("/dev/zero", "") == Kind::kInvalidArgument);
  const std::string socket_path = r.root + "/sock.tif";
  const int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  REQUIRE(socket_path.size() < sizeof(addr.sun_path));
  std::copy(socket_path.begin(), socket_path.end(), addr.sun_path);
  REQUIRE(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  CHECK_THAT(ErrorOf([&] {
               OpenInputFile(socket_path, PathPolicy{r.root, {}});
             }),
             Catch::Contains("a socket"));
  close(sock);
}

TEST_CASE("/vsi paths are refused unless a prefix allows them, naming the flag",
          "[imagery][data_root]") {
  Roots r;
  Kind kind = Kind::kIo;
  const std::string refused = ErrorOf(
      [&] {
        OpenInputFile("/vsicurl/http://127.0.0.1:9/a.tif", PathPolicy{r.root, {}});
      },
      &kind);
  CHECK(kind == Kind::kPermission);
  CHECK_THAT(refused, Catch::Contains("--imagery-allow-remote"));
  for (const char* path : {"/vsizip/"
                           "/etc/a.zip/b.tif",
                           "/vsistdin/", "/vsimem/x.tif", "/vsis3/bucket/a.tif"}) {
    CHECK(InputKind(path, r.root) == Kind::kPermission);
  }
  const std::vector<std::string> allowed =
      ParseRemotePrefixes({"/vsis3/bucket/cogs,/vsicurl/https://data.example.org/"});
  REQUIRE(allowed ==
          std::vector<std::string>{"/vsis3/bucket/cogs/", "/vsicurl/https://data.example.org/"});
  const InputFile remote = OpenInputFile("/vsis3/bucket/cogs/a.tif", PathPolicy{r.root, allowed});
  CHECK(remote.remote());
  CHECK(remote.GdalPath() == "/vsis3/bucket/cogs/a.tif");
  CHECK_NOTHROW(CheckRemotePath("/vsicurl/https://data.example.org/x/a.tif?sig=1", allowed));
  for (const char* path : {
           "/vsis3/bucket/cogsX/a.tif",                          // not on a segment boundary
           "/vsis3/bucket/other/a.tif",                          // another folder
           "/vsis3/bucket/cogs/../secret/a.tif",                 // dot segment
           "/vsis3/bucket/cogs/./a.tif",                         //
           "/vsis3/bucket/cogs//a.tif",                          // empty segment
           "/vsicurl/https://data.example.org/%2e%2e/a.tif",     // escaped dot
           "/vsicurl/https://data.example.org.evil.net/a.tif",   // another host
           "/vsicurl/https://data.example.org@127.0.0.1/a.tif",  // userinfo trick
           "/vsicurl/http://127.0.0.1:6379/",                    // loopback
           "/vsizip//vsis3/bucket/cogs/a.zip/b.tif",             // a wrapper not named
       }) {
    INFO(path);
    CHECK_THROWS_AS(CheckRemotePath(path, allowed), ImageryError);
  }
  CHECK_THROWS_AS(ParseRemotePrefixes({"https://example.org/"}), std::invalid_argument);
  CHECK_THROWS_AS(ParseRemotePrefixes({"/vsicurl/"}), std::invalid_argument);  // all of it
  CHECK_THROWS_AS(ParseRemotePrefixes({"/vsis3/b/../c/"}), std::invalid_argument);
  CHECK_THROWS_WITH(ParseRemotePrefixes({"/vsis3/"}), Catch::Contains("--imagery-allow-remote"));
}

TEST_CASE("Output directories are real directories inside a root", "[imagery][data_root]") {
  Roots r;
  const OutputDir made = OutputDir::Open("a/b/c", {r.root});
  CHECK(made.path() == fs::canonical(r.root).string() + "/a/b/c");
  CHECK(fs::is_directory(r.root + "/a/b/c"));
  CHECK(OutputDir::Open(r.root + "/a/b", {r.root}).path() ==
        fs::canonical(r.root).string() + "/a/b");
  CHECK(OutputDir::Open(r.outside + "/out", {r.root, r.outside}).path() ==
        fs::canonical(r.outside).string() + "/out");  // a second root (--output-root)

  Kind kind = Kind::kIo;
  CHECK_FALSE(ErrorOf([&] { OutputDir::Open(r.outside, {r.root}); }, &kind).empty());
  CHECK(kind == Kind::kPermission);
  CHECK_FALSE(ErrorOf([&] { OutputDir::Open("../outside", {r.root}); }, &kind).empty());
  CHECK(kind == Kind::kPermission);
  // A symlinked output_dir, or one below a symlinked folder, is refused, and nothing is created
  // where it points.
  fs::create_directory_symlink(r.outside, r.root + "/out_link");
  fs::create_directory_symlink(r.root + "/a", r.root + "/inner_link");
  for (const char* dir : {"out_link", "out_link/new", "inner_link"}) {
    INFO(dir);
    CHECK_THAT(ErrorOf([&] { OutputDir::Open(dir, {r.root}); }, &kind), Catch::Contains("symlink"));
    CHECK(kind == Kind::kPermission);
  }
  CHECK_FALSE(fs::exists(r.outside + "/new"));
  CHECK_FALSE(ErrorOf([&] { OutputDir::Open("sub/a.tif", {r.root}); }, &kind).empty());
  CHECK(kind == Kind::kPermission);  // a file is not a directory
}

TEST_CASE("Output files replace a planted symlink instead of writing through it",
          "[imagery][data_root]") {
  Roots r;
  const OutputDir dir = OutputDir::Open("out", {r.root});
  fs::create_symlink(r.outside + "/secret.tif", r.root + "/out/mask.tif");
  fs::create_symlink(r.outside + "/created.json", r.root + "/out/result.json");
  {
    OutputFile mask(dir, "mask.tif");
    CHECK(mask.path() == dir.path() + "/mask.tif");
    mask.Write("new mask");
    // What a library that opens the path itself (GDAL) writes lands in the same file.
    std::ofstream(mask.WritePath(), std::ios::app) << " + gdal";
    mask.Commit();
    OutputFile result(dir, "result.json");
    result.Write("{}");
    result.Commit();
  }
  CHECK(Slurp(r.outside + "/secret.tif") == "secret");
  CHECK_FALSE(fs::exists(r.outside + "/created.json"));
  CHECK_FALSE(fs::is_symlink(r.root + "/out/mask.tif"));
  CHECK(fs::is_regular_file(r.root + "/out/mask.tif"));
  CHECK(Slurp(r.root + "/out/mask.tif") == "new mask + gdal");
  CHECK(Slurp(r.root + "/out/result.json") == "{}");
  {
    OutputFile abandoned(dir, "partial.tif");
    abandoned.Write("half");
  }
  CHECK(fs::directory_iterator(r.root + "/out") != fs::directory_iterator());
  for (const auto& entry : fs::directory_iterator(r.root + "/out")) {
    CHECK(entry.path().filename().string()[0] != '.');  // no temporary file left behind
  }
  fs::create_directory(r.root + "/out/taken.png");
  OutputFile blocked(dir, "taken.png");
  CHECK_THROWS_AS(blocked.Commit(), ImageryError);  // a directory is not replaced
  CHECK_THROWS_AS(OutputFile(dir, "../escape.tif"), ImageryError);
}

TEST_CASE("Raster formats are told by their first bytes", "[imagery][data_root]") {
  using namespace std::string_view_literals;
  CHECK(SniffRasterFormat("II*\0rest"sv) == RasterFormat::kGTiff);
  CHECK(SniffRasterFormat("MM\0+rest"sv) == RasterFormat::kGTiff);
  CHECK(SniffRasterFormat("\x89PNG\r\n\x1a\n...") == RasterFormat::kPng);
  CHECK(SniffRasterFormat("\xff\xd8\xff\xe0") == RasterFormat::kJpeg);
  CHECK(SniffRasterFormat("\0\0\0\x0cjP  \r\n\x87\n"sv) == RasterFormat::kJpeg2000);
  CHECK(SniffRasterFormat("\xef\xbb\xbf \n<VRTDataset rasterXSize=") == RasterFormat::kVrt);
  CHECK(SniffRasterFormat("<?xml version='1.0'?><VRTDataset>") == RasterFormat::kUnknown);
  CHECK(SniffRasterFormat("MEM:::DATAPOINTER=0x1") == RasterFormat::kUnknown);
  CHECK(SniffRasterFormat("") == RasterFormat::kUnknown);
  CHECK(RelativeInside("/data/a/../b", "/data") == std::optional<std::string>("b"));
  CHECK(RelativeInside("/data", "/data/") == std::optional<std::string>(""));
  CHECK_FALSE(RelativeInside("/data/../etc", "/data"));
  CHECK_FALSE(RelativeInside("/database", "/data"));
}

}  // namespace
}  // namespace warmpool::imagery
