#include "tests/integration/worker/worker_fixture.h"

#include <catch2/catch.hpp>

namespace warmpool::testing {

std::string WorkerBinary() { return std::string(WARMPOOL_BINARY_DIR) + "/worker/warmpool-worker"; }

std::string ClientScript() { return PythonScriptsDir() + "/worker_client.py"; }

WorkerFixture::WorkerFixture() : dir(MakeTempDir("worker-it")) {}

std::unique_ptr<ChildProcess> WorkerFixture::StartWorker(
    const std::vector<std::string>& extra, const std::string& hostname,
    const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = {WorkerBinary(),     "--broker",    broker(),
                                   "--result-backend", backend(),     "--hostname",
                                   hostname,           "--log-level", "debug"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::string log = dir + "/worker-" + std::to_string(++worker_count) + ".log";
  return std::make_unique<ChildProcess>(argv, log, env);
}

nlohmann::json WorkerFixture::Client(const std::vector<std::string>& args,
                                     std::chrono::seconds timeout) {
  std::vector<std::string> argv = {PythonInterpreter(), ClientScript(), "--broker", broker(),
                                   "--backend",         backend()};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv, timeout);
  INFO("client output: " << r.output);
  REQUIRE(r.exit_code == 0);
  auto end = r.output.find_last_not_of("\n");
  auto start = r.output.rfind('\n', end);
  std::string last = r.output.substr(start == std::string::npos ? 0 : start + 1,
                                     end - (start == std::string::npos ? 0 : start + 1) + 1);
  return nlohmann::json::parse(last);
}

std::string WorkerFixture::Cli(const std::vector<std::string>& args, int db) const {
  return redis.Cli(args, db);
}

long long WorkerFixture::Int(const std::vector<std::string>& args, int db) const {
  std::string out = redis.Cli(args, db);
  try {
    return std::stoll(out);
  } catch (const std::exception&) {
    FAIL("redis-cli " << args.front() << " answered '" << out << "'");
  }
  return -1;
}

bool WorkerFixture::WaitUnacked(long long n, std::chrono::milliseconds timeout) {
  return WaitFor([&] { return Int({"HLEN", "unacked"}) == n; }, timeout);
}

void CheckServingThenStopsCleanly(ChildProcess& worker) {
  CHECK(worker.Running());
  worker.Signal(SIGTERM);
  CHECK(worker.Wait(std::chrono::seconds(10)) == 0);
}

}  // namespace warmpool::testing
