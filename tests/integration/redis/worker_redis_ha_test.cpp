// The real warmpool-worker with a real Python Celery 5.2.6 producer over rediss:// as an ACL
// user, with a wrong CA, and through a Sentinel failover (master SIGKILLed while tasks run).
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/integration/redis/redis_tls_fixture.h"
#include "tests/integration/worker/worker_fixture.h"

namespace warmpool::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

json RunClient(const std::string& broker, const std::string& backend,
               const std::vector<std::string>& args, std::chrono::seconds timeout = 60s) {
  std::vector<std::string> argv = {PythonInterpreter(), ClientScript(), "--broker", broker,
                                   "--backend",         backend};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv, timeout);
  INFO("client output: " << r.output);
  REQUIRE(r.exit_code == 0);
  std::string out = r.output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return json::parse(out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1));
}

TEST_CASE("Celery over rediss:// with an ACL user: the worker runs the task, get() returns it",
          "[worker][redis][tls][integration]") {
  const TestCerts certs = MakeTestCerts();
  auto redis = StartTlsRedis(certs);
  const std::string dir = MakeTempDir("worker-tls");
  const std::string broker = TlsUrl(*redis, certs.ca, 0);
  const std::string backend = TlsUrl(*redis, certs.ca, 1);
  ChildProcess worker({WorkerBinary(), "--broker", broker, "--result-backend", backend,
                       "--hostname", "warmpool@tls"},
                      dir + "/worker.log");
  json out = RunClient(broker, backend, {"call", "warmpool.add", "--args", "[2, 3]"});
  CHECK(out["status"] == "SUCCESS");
  CHECK(out["result"] == 5);
  CHECK_THAT(worker.Log(), !Catch::Contains(kAclPasswordEncoded) && !Catch::Contains("p@ss"));
  CheckServingThenStopsCleanly(worker);
}

TEST_CASE("A worker given the wrong CA says certificate verify failed, naming the host",
          "[worker][redis][tls][integration]") {
  const TestCerts certs = MakeTestCerts();
  auto redis = StartTlsRedis(certs);
  const std::string dir = MakeTempDir("worker-tls-bad");
  const std::string url = TlsUrl(*redis, certs.other_ca, 0);
  ChildProcess worker({WorkerBinary(), "--broker", url, "--hostname", "warmpool@badca"},
                      dir + "/worker.log");
  CHECK(WaitFor(
      [&] {
        return worker.Log().find("certificate verify failed for host '127.0.0.1'") !=
               std::string::npos;
      },
      15s));
  CHECK_THAT(worker.Log(), !Catch::Contains(kAclPasswordEncoded) && !Catch::Contains("p@ss"));
  worker.Signal(SIGTERM);
  worker.Wait(10s);
}

TEST_CASE("Through a Sentinel failover the worker finishes every task Celery sent",
          "[worker][redis][sentinel][integration]") {
  SentinelSetup ha;
  const std::string dir = MakeTempDir("worker-sentinel");
  // Python (kombu, Celery's SentinelBackend) takes master_name as a transport option; the
  // worker from --redis-master-name.
  const std::string broker = ha.Url(0, /*with_master_name=*/false);
  const std::string backend = ha.Url(1, /*with_master_name=*/false);
  ChildProcess worker(
      {WorkerBinary(), "--broker", broker, "--result-backend", backend, "--redis-master-name",
       "mymaster", "--hostname", "warmpool@ha", "--concurrency", "2", "--visibility-timeout", "5"},
      dir + "/worker.log");
  const std::vector<std::string> py = {"--master-name", "mymaster"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), py.begin(), py.end());
    return args;
  };
  json first =
      RunClient(broker, backend, with({"send", "warmpool.sleep", "--args", "[0.2]", "--n", "16"}));
  REQUIRE(first["ids"].size() == 16);
  REQUIRE(ha.WaitReplicated(2s));  // what Celery sent survives the master (async replication)
  // Kill while tasks run: some done, some taken, some still queued.
  REQUIRE(WaitFor(
      [&] {
        return std::atoi(ha.master().Cli({"LLEN", "celery"}).c_str()) < 14;
      },
      15s));
  REQUIRE(ha.KillMasterAndWaitFailover(20s));
  json second =
      RunClient(broker, backend, with({"send", "warmpool.sleep", "--args", "[0.05]", "--n", "8"}));
  json ids = first["ids"];
  for (const auto& id : second["ids"]) ids.push_back(id);
  const std::string ids_file = dir + "/ids.json";
  std::ofstream(ids_file) << json{{"ids", ids}}.dump();
  json done = RunClient(broker, backend, with({"collect", ids_file, "--timeout", "30"}), 90s);
  INFO("worker log: " << worker.Log().substr(0, 4000));
  CHECK(done["n"] == 24);
  CHECK(done["statuses"]["SUCCESS"] == 24);
  CheckServingThenStopsCleanly(worker);
}

}  // namespace
}  // namespace warmpool::testing
