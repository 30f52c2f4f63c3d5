// imagery.change_detection against a hostile data root: planted symlinks, VRTs that point out of
// it, a FIFO, network paths. Only the task's public entry point is used, so these cases run
// unchanged against any version of the task.
#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <gdal.h>
#include <gdal_utils.h>

#include "imagery/testing/synthetic_pair.h"
#include "tests/support/temp_dir.h"
#include "worker/tasks/change_detection_task.h"
#include "worker/tasks/imagery_exceptions.h"

namespace warmpool::imagery {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace std::chrono_literals;

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void Put(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A data root holding a synthetic pair, and a folder outside it with a valid raster (a copy of
// `before`) and a file the task must never touch.
struct HostileRoot {
  testing::TempDir dir;
  ImageryConfig config;
  std::string root = dir.Sub("data");
  std::string outside = dir.Sub("outside");
  std::string before, after;

  HostileRoot() {
    SynthOptions s;
    s.width = 96;
    s.height = 64;
    s.object_count = 6;
    s.max_object_side = 16;
    const Json files = WriteSyntheticPair(GenerateSyntheticPair(s), root, "pair");
    before = files["before"];
    after = files["after"];
    fs::create_directories(outside);
    fs::copy_file(before, outside + "/secret.tif");
    Put(outside + "/precious.txt", "precious");
    config.data_root = root;
    config.device = "cpu";
    config.threads = 1;
  }

  // {exc_type, message}; exc_type "" on success.
  std::pair<std::string, std::string> Run(const Json& kwargs) const {
    try {
      RunChangeDetectionTask(Json::array(), kwargs, config);
    } catch (const ImageryError& e) {
      return {warmpool::worker::PythonExceptionFor(e), e.what()};
    }
    return {"", ""};
  }

  // A VRT of one raster (GDALBuildVRT: the source relative to the VRT when it can be).
  std::string BuildVrt(const std::string& source, const std::string& vrt) const {
    const char* inputs[] = {source.c_str()};
    int usage_error = 0;
    GDALAllRegister();
    GDALDatasetH ds = GDALBuildVRT(vrt.c_str(), 1, nullptr, inputs, nullptr, &usage_error);
    REQUIRE(ds != nullptr);
    GDALClose(ds);
    return Slurp(vrt);
  }

  bool OutsideUntouched() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(outside)) ++n;
    return n == 2 && Slurp(outside + "/precious.txt") == "precious" &&
           Slurp(outside + "/secret.tif") == Slurp(before);
  }
};

// `text` with every `from` replaced by `to` (there must be one).
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  REQUIRE(text.find(from) != std::string::npos);
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST_CASE("Outputs planted as symlinks out of the root are replaced, never written through",
          "[imagery][confinement]") {
  HostileRoot h;
  const std::string out = h.root + "/out";
  fs::create_directories(out);
  fs::create_symlink(h.outside + "/precious.txt", out + "/change_mask.tif");
  fs::create_symlink(h.outside + "/precious.txt", out + "/change_regions.geojson");
  fs::create_symlink(h.outside + "/new_quicklook.png", out + "/change_quicklook.png");  // dangling
  fs::create_symlink(h.outside + "/precious.txt", out + "/change_result.json");
  const auto [exc, message] =
      h.Run({{"before", h.before}, {"after", h.after}, {"output_dir", out}});
  INFO(message);
  REQUIRE(exc == "");
  CHECK(h.OutsideUntouched());
  CHECK_FALSE(fs::exists(h.outside + "/new_quicklook.png"));
  for (const char* name : {"change_mask.tif", "change_regions.geojson", "change_quicklook.png",
                           "change_result.json"}) {
    INFO(name);
    CHECK_FALSE(fs::is_symlink(out + "/" + name));
    CHECK(fs::is_regular_file(out + "/" + name));
    CHECK(fs::file_size(out + "/" + name) > 10);
  }
  CHECK(Slurp(out + "/change_mask.tif").substr(0, 2) == "II");
  CHECK(Json::parse(Slurp(out + "/change_result.json"))["changed_pixels"].get<long>() > 0);
}

TEST_CASE("A symlinked output folder is refused, the default one included",
          "[imagery][confinement]") {
  HostileRoot h;
  fs::create_directory_symlink(h.outside, h.root + "/changes");  // the default parent
  fs::create_directory_symlink(h.outside, h.root + "/out_link");
  for (const Json& kwargs :
       {Json{{"before", h.before}, {"after", h.after}},
        Json{{"before", h.before}, {"after", h.after}, {"output_dir", h.root + "/out_link"}},
        Json{{"before", h.before}, {"after", h.after}, {"output_dir", "out_link/sub"}},
        Json{{"before", h.before},
             {"after", h.after},
             {"output_dir", h.root + "/../outside/out"}}}) {
    INFO(kwargs.dump());
    const auto [exc, message] = h.Run(kwargs);
    INFO(message);
    CHECK(exc == "PermissionError");
    CHECK(h.OutsideUntouched());
  }
}

TEST_CASE("A VRT is read only when every file it names is inside the root",
          "[imagery][confinement]") {
  HostileRoot h;
  const Json plain = [&] {
    return RunChangeDetectionTask(
        Json::array(), {{"before", h.before}, {"after", h.after}, {"quicklook", false}}, h.config);
  }();
  SECTION("inside: allowed, same result as the GeoTIFF") {
    h.BuildVrt(h.before, h.root + "/inside.vrt");
    const Json r = RunChangeDetectionTask(
        Json::array(),
        {{"before", h.root + "/inside.vrt"}, {"after", h.after}, {"quicklook", false}}, h.config);
    CHECK(r["changed_pixels"] == plain["changed_pixels"]);
    CHECK(r["threshold"] == plain["threshold"]);
  }
  // GDALBuildVRT names the outside raster by its absolute path.
  const std::string secret = h.outside + "/secret.tif";
  const std::string escape = h.BuildVrt(secret, h.root + "/escape.vrt");
  REQUIRE_THAT(escape, Catch::Contains(">" + secret + "<"));
  SECTION("an absolute source out of the root") {
    const auto [exc, message] = h.Run({{"before", h.root + "/escape.vrt"}, {"after", h.after}});
    INFO(message);
    CHECK(exc == "PermissionError");
  }
  SECTION("a `..` source, relative to the VRT, out of the root") {
    Put(h.root + "/dotdot.vrt", Replace(Replace(escape, secret, "../outside/secret.tif"),
                                        "relativeToVRT=\"0\"", "relativeToVRT=\"1\""));
    const auto [exc, message] = h.Run({{"before", h.root + "/dotdot.vrt"}, {"after", h.after}});
    INFO(message);
    CHECK(exc == "PermissionError");
  }
  SECTION("VRT XML in a file named .tif") {
    Put(h.root + "/looks_like.tif", escape);
    const auto [exc, message] = h.Run({{"before", h.root + "/looks_like.tif"}, {"after", h.after}});
    INFO(message);
    CHECK(exc == "PermissionError");
  }
  SECTION("a source that is a symlink inside the root pointing out of it") {
    fs::create_symlink(h.outside + "/secret.tif", h.root + "/link.tif");
    Put(h.root + "/via_link.vrt",
        Replace(Replace(escape, secret, "link.tif"), "relativeToVRT=\"0\"", "relativeToVRT=\"1\""));
    const auto [exc, message] = h.Run({{"before", h.root + "/via_link.vrt"}, {"after", h.after}});
    INFO(message);
    CHECK(exc == "PermissionError");
  }
  SECTION("a source that is a FIFO is refused, not waited on") {
    REQUIRE(mkfifo((h.root + "/pipe.tif").c_str(), 0600) == 0);
    Put(h.root + "/fifo.vrt",
        Replace(Replace(escape, secret, "pipe.tif"), "relativeToVRT=\"0\"", "relativeToVRT=\"1\""));
    auto run = std::async(std::launch::async, [&] {
      return h.Run({{"before", h.root + "/fifo.vrt"}, {"after", h.after}});
    });
    if (run.wait_for(10s) != std::future_status::ready) {
      // Release the reader (an old task blocks in open()) so the test can end, then fail.
      for (int i = 0; i < 100; ++i) {
        const int w = open((h.root + "/pipe.tif").c_str(), O_WRONLY | O_NONBLOCK);
        if (w >= 0) {
          close(w);
          break;
        }
        std::this_thread::sleep_for(50ms);
      }
      run.wait();
      FAIL("the task blocked on a FIFO named by a VRT");
    }
    CHECK(run.get().first != "");
  }
  SECTION("derived bands, raw bands and connection strings are refused") {
    Put(h.root + "/derived.vrt",
        Replace(escape, "<VRTRasterBand ", "<VRTRasterBand subClass=\"VRTDerivedRasterBand\" "));
    Put(h.root + "/mem.vrt", Replace(escape, secret, "MEM:::DATAPOINTER=0"));
    for (const char* name : {"/derived.vrt", "/mem.vrt"}) {
      INFO(name);
      const auto [exc, message] = h.Run({{"before", h.root + name}, {"after", h.after}});
      INFO(message);
      CHECK(exc != "");
    }
  }
  CHECK(h.OutsideUntouched());
}

TEST_CASE("Inputs: `..`, symlinks out of the root, FIFOs and devices are refused",
          "[imagery][confinement]") {
  HostileRoot h;
  fs::create_symlink(h.outside + "/secret.tif", h.root + "/link.tif");
  fs::create_directories(h.root + "/sub");
  for (const std::string& path :
       {h.root + "/sub/../../outside/secret.tif", std::string("../outside/secret.tif"),
        h.root + "/link.tif", h.outside + "/secret.tif"}) {
    INFO(path);
    const auto [exc, message] = h.Run({{"before", path}, {"after", h.after}});
    INFO(message);
    CHECK(exc == "PermissionError");
  }
  REQUIRE(mkfifo((h.root + "/pipe.tif").c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  auto run = std::async(std::launch::async, [&] {
    return h.Run({{"before", h.root + "/pipe.tif"}, {"after", h.after}});
  });
  if (run.wait_for(10s) != std::future_status::ready) {
    for (int i = 0; i < 100; ++i) {
      const int w = open((h.root + "/pipe.tif").c_str(), O_WRONLY | O_NONBLOCK);
      if (w >= 0) {
        close(w);
        break;
      }
      std::this_thread::sleep_for(50ms);
    }
    run.wait();
    FAIL("the task blocked on a FIFO given as input");
  }
  const auto [exc, message] = run.get();
  INFO(message);
  CHECK(exc == "ValueError");
  CHECK_THAT(message, Catch::Contains("FIFO"));
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  h.config.data_root = "";
  CHECK(h.Run({{"before", "/dev/zero"}, {"after", h.after}}).first == "ValueError");
}

// Counts connections to a loopback port (each closed at once) while alive.
class ConnectionCounter {
 public:
  ConnectionCounter() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    REQUIRE(listen(fd_, 16) == 0);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 50) == 1) {
          const int c = accept(fd_, nullptr, nullptr);
          if (c >= 0) {
            ++count_;
            close(c);
          }
        }
      }
    });
  }
  ~ConnectionCounter() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  int count() const { return count_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> count_{0};
  std::thread thread_;
};

TEST_CASE("Network paths are refused before any connection, naming the flag",
          "[imagery][confinement]") {
  HostileRoot h;
  ConnectionCounter server;
  const std::string url = "/vsicurl/http://127.0.0.1:" + std::to_string(server.port()) + "/a.tif";
  const auto [exc, message] = h.Run({{"before", url}, {"after", h.after}});
  INFO(message);
  CHECK(exc == "PermissionError");
  CHECK_THAT(message, Catch::Contains("--imagery-allow-remote"));
  // ... also when a VRT inside the root names it.
  const std::string vrt = h.BuildVrt(h.before, h.root + "/remote.vrt");
  Put(h.root + "/remote.vrt",
      Replace(Replace(vrt, "pair_before.tif", url), "relativeToVRT=\"1\"", "relativeToVRT=\"0\""));
  const auto via_vrt = h.Run({{"before", h.root + "/remote.vrt"}, {"after", h.after}});
  INFO(via_vrt.second);
  CHECK(via_vrt.first == "PermissionError");
  std::this_thread::sleep_for(200ms);
  CHECK(server.count() == 0);
}

}  // namespace
}  // namespace warmpool::imagery
