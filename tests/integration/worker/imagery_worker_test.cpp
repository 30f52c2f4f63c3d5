// The change-detection task called from Python Celery 5.2.6 through a real warmpool-worker.
#include <arpa/inet.h>
#include <atomic>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/integration/worker/worker_fixture.h"

namespace warmpool::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string SynthBinary() { return std::string(WARMPOOL_BINARY_DIR) + "/imagery/warmpool-synth"; }

TEST_CASE("imagery.change_detection from Python Celery: result, outputs, clear failures",
          "[imagery][integration]") {
  WorkerFixture fx;
  const std::string root = fx.dir + "/data";
  std::filesystem::create_directories(root);
  auto synth = RunCommand({SynthBinary(), "--out-dir", root + "/pair", "--width", "256", "--height",
                           "256", "--seed", "11"},
                          60s);
  REQUIRE(synth.exit_code == 0);
  auto worker = fx.StartWorker({"-Q", "gpu", "--data-root", root, "--device", "cpu",
                                "--imagery-threads", "3", "--imagery-decode-budget-mb", "0"});
  const std::string before = root + "/pair/synth_before.tif";
  const std::string after = root + "/pair/synth_after.tif";

  SECTION("a synthetic pair gives changes, a GeoTIFF mask and a quick-look") {
    json r = fx.Client(
        {"call", "imagery.change_detection", "--queue", "gpu", "--kwargs",
         json({{"before", before}, {"after", after}, {"output_dir", root + "/out"}}).dump(),
         "--timeout", "120"},
        150s);
    REQUIRE(r["status"] == "SUCCESS");
    const json& res = r["result"];
    CHECK(res["device"] == "cpu");
    CHECK(res["method"] == "irmad");  // no method named: chosen from the 4 bands
    CHECK(res["selected_by_data"] == true);
    CHECK_THAT(res["selection_reason"].get<std::string>(), Catch::Contains("IR-MAD"));
    CHECK(res["irmad"]["iterations"].get<int>() >= 1);
    CHECK(res["decoded_whole"] == false);  // --imagery-decode-budget-mb 0: read in strips
    CHECK(res["changed_pixels"].get<long>() > 0);
    CHECK(res["changed_fraction"].get<double>() < 0.5);
    CHECK(res["region_count"].get<long>() > 0);
    CHECK(std::filesystem::exists(res["outputs"]["mask"].get<std::string>()));
    CHECK(std::filesystem::exists(res["outputs"]["quicklook"].get<std::string>()));
    CHECK(std::filesystem::exists(res["outputs"]["regions_geojson"].get<std::string>()));
    CHECK_THAT(worker->Log(), Catch::Contains("imagery_threads") && Catch::Contains("threads=3"));
  }
  SECTION("identical images: no change") {
    json r = fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--args",
                        json::array({before, before}).dump(), "--timeout", "120"},
                       150s);
    REQUIRE(r["status"] == "SUCCESS");
    CHECK(r["result"]["changed_pixels"] == 0);
  }
  SECTION("bad inputs fail with the right Python class and the worker keeps serving") {
    json outside = fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--args",
                              json::array({"/etc/hostname", after}).dump()});
    CHECK(outside["status"] == "FAILURE");
    CHECK(outside["exc_type"] == "PermissionError");
    json missing = fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--args",
                              json::array({root + "/nope.tif", after}).dump()});
    CHECK(missing["status"] == "FAILURE");
    CHECK(missing["exc_type"] == "FileNotFoundError");
    json wrong =
        fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--kwargs",
                   json({{"before", before}, {"after", after}, {"method", "magic"}}).dump()});
    CHECK(wrong["status"] == "FAILURE");
    CHECK(wrong["exc_type"] == "ValueError");
    json ping = fx.Client({"call", "warmpool.ping", "--queue", "gpu"});
    CHECK(ping["status"] == "SUCCESS");
  }
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(30s) == 0);
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Lets an old task blocked in open() on `fifo` go on, so a failing run can still end.
void ReleaseFifoReader(const std::string& fifo) {
  for (int i = 0; i < 40; ++i) {
    const int w = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) {
      close(w);
      return;
    }
    std::this_thread::sleep_for(50ms);
  }
}

// A loopback port that accepts connections and never answers (a stuck remote raster).
class SilentServer {
 public:
  SilentServer() {
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
          if (c >= 0) held_.push_back(c);
        }
      }
      for (const int c : held_) close(c);
    });
  }
  ~SilentServer() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> held_;
  std::thread thread_;
};

TEST_CASE("imagery.change_detection stays inside its data root, refusals are prompt FAILUREs",
          "[imagery][integration]") {
  WorkerFixture fx;
  const std::string root = fx.dir + "/data";
  const std::string outside = fx.dir + "/outside";
  std::filesystem::create_directories(root + "/out");
  std::filesystem::create_directories(outside);
  auto synth = RunCommand({SynthBinary(), "--out-dir", root + "/pair", "--width", "128", "--height",
                           "128", "--seed", "5"},
                          60s);
  REQUIRE(synth.exit_code == 0);
  const std::string before = root + "/pair/synth_before.tif";
  const std::string after = root + "/pair/synth_after.tif";
  std::ofstream(outside + "/precious.txt") << "precious";
  std::filesystem::create_symlink(outside + "/precious.txt", root + "/out/change_mask.tif");
  std::filesystem::create_symlink(outside + "/precious.txt", root + "/out/change_result.json");
  const std::string fifo = root + "/pipe.tif";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  auto worker = fx.StartWorker(
      {"-Q", "gpu", "--data-root", root, "--device", "cpu", "--imagery-threads", "1"});

  json planted =
      fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--kwargs",
                 json({{"before", before}, {"after", after}, {"output_dir", root + "/out"}}).dump(),
                 "--timeout", "60"},
                90s);
  CHECK(planted["status"] == "SUCCESS");
  CHECK(Slurp(outside + "/precious.txt") == "precious");
  CHECK_FALSE(std::filesystem::is_symlink(root + "/out/change_mask.tif"));
  CHECK(Slurp(root + "/out/change_mask.tif").substr(0, 2) == "II");

  const auto start = std::chrono::steady_clock::now();
  json piped = fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--args",
                          json::array({fifo, after}).dump(), "--timeout", "20"},
                         60s);
  ReleaseFifoReader(fifo);  // only needed when the worker blocked
  CHECK(piped["status"] == "FAILURE");
  CHECK(piped["exc_type"] == "ValueError");
  CHECK(std::chrono::steady_clock::now() - start < 15s);
  // Both acked, the slot free for the next task.
  CHECK(fx.WaitUnacked(0, 5000ms));
  CHECK(fx.Client({"call", "warmpool.ping", "--queue", "gpu", "--timeout", "20"})["status"] ==
        "SUCCESS");
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(30s) == 0);
}

TEST_CASE("A stuck imagery read ends at --imagery-time-limit and frees the slot",
          "[imagery][integration]") {
  WorkerFixture fx;
  const std::string root = fx.dir + "/data";
  std::filesystem::create_directories(root);
  auto server = std::make_unique<SilentServer>();
  const std::string prefix = "/vsicurl/http://127.0.0.1:" + std::to_string(server->port()) + "/";
  auto worker = fx.StartWorker({"-Q", "gpu", "--data-root", root, "--device", "cpu",
                                "--imagery-allow-remote", prefix, "--imagery-time-limit", "2"});
  const auto start = std::chrono::steady_clock::now();
  json stuck =
      fx.Client({"call", "imagery.change_detection", "--queue", "gpu", "--args",
                 json::array({prefix + "a.tif", prefix + "b.tif"}).dump(), "--timeout", "30"},
                60s);
  CHECK(stuck["status"] == "FAILURE");
  CHECK(stuck["exc_type"] == "TimeLimitExceeded");
  CHECK(std::chrono::steady_clock::now() - start < 20s);
  CHECK(fx.Client({"call", "warmpool.ping", "--queue", "gpu", "--timeout", "20"})["status"] ==
        "SUCCESS");
  CHECK(fx.WaitUnacked(0, 5000ms));
  server.reset();  // the abandoned read gets its connection closed and ends
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(30s) == 0);
}

}  // namespace
}  // namespace warmpool::testing
