// --pod-deletion-cost end to end: a real redis-server, the real warmpool-worker and Python Celery,
// with a stand-in Kubernetes API server (kube_api_stub.py) that records every PATCH.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/integration/worker/worker_fixture.h"
#include "tests/support/skip_test.h"

namespace warmpool::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path + ".tmp") << text;
  std::rename((path + ".tmp").c_str(), path.c_str());  // never read half written
}

// kube_api_stub.py on a free loopback port, with its request log and answer file in `dir`.
class KubeApiStub {
 public:
  explicit KubeApiStub(const std::string& dir)
      : requests_(dir + "/api-requests.jsonl"), status_(dir + "/api-status") {
    const std::string script =
        std::string(WARMPOOL_SOURCE_DIR) + "/tests/integration/worker/kube_api_stub.py";
    if (access(PythonInterpreter().c_str(), X_OK) != 0) {
      SkipTest(PythonInterpreter() + " not found: it runs the stand-in API server");
    }
    const std::string port_file = dir + "/api-port";
    server_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{PythonInterpreter(), script, "--port-file", port_file,
                                 "--requests", requests_, "--status-file", status_},
        dir + "/api-stub.log");
    REQUIRE(WaitFor([&] { return std::ifstream(port_file) >> port_ && port_ > 0; }, seconds(15)));
  }

  // 200 (default), another HTTP code, or "hang".
  void Answer(const std::string& status) { WriteFile(status_, status); }

  // The worker's environment: the test overrides of the in-cluster config, no proxy.
  std::map<std::string, std::string> WorkerEnv(const std::string& token_file) const {
    return {{"POD_NAME", "warmpool-worker-abc12"},
            {"POD_NAMESPACE", "gpu-jobs"},
            {"WARMPOOL_KUBE_API", "http://127.0.0.1:" + std::to_string(port_)},
            {"WARMPOOL_KUBE_TOKEN_FILE", token_file},
            {"no_proxy", "127.0.0.1"},
            {"NO_PROXY", "127.0.0.1"}};
  }

  // Every request so far (complete lines only).
  std::vector<json> Requests() const {
    std::ifstream in(requests_);
    std::stringstream text;
    text << in.rdbuf();
    std::vector<json> out;
    const std::string all = text.str();
    for (size_t start = 0, end; (end = all.find('\n', start)) != std::string::npos;
         start = end + 1) {
      out.push_back(json::parse(all.substr(start, end - start)));
    }
    return out;
  }

 private:
  std::string requests_, status_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> server_;
};

// A redis-server, the stand-in API server answering `status` and a token file holding `token`.
struct PodCostRig {
  PodCostRig(const std::string& status, const std::string& token)
      : api(fx.dir), token_file(fx.dir + "/token") {
    api.Answer(status);
    WriteFile(token_file, token);
  }
  std::unique_ptr<ChildProcess> StartWorker() {
    return fx.StartWorker({"--pod-deletion-cost"}, "warmpool@test", api.WorkerEnv(token_file));
  }

  WorkerFixture fx;
  KubeApiStub api;
  const std::string token_file;
};

std::string Cost(const json& request) {
  return json::parse(
      request["body"].get<std::string>())["metadata"]["annotations"]
                                         ["controller.kubernetes.io/pod-deletion-cost"];
}

std::vector<std::string> Costs(const std::vector<json>& requests) {
  std::vector<std::string> out;
  for (const auto& r : requests) out.push_back(Cost(r));
  return out;
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("The pod is annotated 1 while a long task runs, then 0, in a few PATCHes",
          "[worker][integration][pod_cost]") {
  PodCostRig rig("200", "first-token\n");
  WorkerFixture& fx = rig.fx;
  KubeApiStub& api = rig.api;
  auto worker = rig.StartWorker();

  // At start, with nothing running: a previous container of the pod may have left a cost.
  REQUIRE(WaitFor([&] { return api.Requests().size() == 1; }, seconds(15)));
  CHECK(api.Requests()[0]["authorization"] == "Bearer first-token");
  CHECK(Cost(api.Requests()[0]) == "0");
  WriteFile(rig.token_file, "rotated-token\n");  // projected tokens rotate: read at each request

  json sent = fx.Client({"send", "warmpool.sleep", "--args", "[14]"});
  const std::string id = sent["ids"][0];
  REQUIRE(WaitFor([&] { return api.Requests().size() == 2; }, seconds(30)));
  CHECK(Cost(api.Requests()[1]) == "1");
  CHECK(fx.Int({"EXISTS", "celery-task-meta-" + id}, 1) == 0);  // the task still runs

  const std::string ids_file = fx.dir + "/ids.json";
  std::ofstream(ids_file) << sent.dump();
  CHECK(fx.Client({"collect", ids_file})["statuses"] == json({{"SUCCESS", 1}}));
  // Idle again, written once the 10 s since the last write have passed.
  REQUIRE(WaitFor([&] { return api.Requests().size() == 3; }, seconds(20)));
  std::this_thread::sleep_for(seconds(2));

  const auto requests = api.Requests();
  CHECK(Costs(requests) == std::vector<std::string>{"0", "1", "0"});
  for (size_t i = 0; i < requests.size(); ++i) {
    INFO("request " << i << ": " << requests[i].dump());
    CHECK(requests[i]["method"] == "PATCH");
    CHECK(requests[i]["path"] == "/api/v1/namespaces/gpu-jobs/pods/warmpool-worker-abc12");
    CHECK(requests[i]["content_type"] == "application/merge-patch+json");
    if (i > 0) CHECK(requests[i]["authorization"] == "Bearer rotated-token");
  }
  const std::string log = worker->Log();
  CHECK_THAT(log, Catch::Contains("pod_deletion_cost_enabled"));
  CHECK_THAT(log, !Catch::Contains("pod_deletion_cost_failed"));
  CHECK_THAT(log, !Catch::Contains("first-token") && !Catch::Contains("rotated-token"));
  CheckServingThenStopsCleanly(*worker);
}

TEST_CASE("A refused PATCH (no RBAC) is logged once, the task still runs, and recovery is logged",
          "[worker][integration][pod_cost]") {
  PodCostRig rig("403", "secret-token");
  auto worker = rig.StartWorker();

  json r = rig.fx.Client({"call", "warmpool.sleep", "--args", "[0.5]"});
  CHECK(r["status"] == "SUCCESS");
  // Retried every 10 s while refused; warned about once.
  REQUIRE(WaitFor([&] { return rig.api.Requests().size() >= 2; }, seconds(25)));
  std::string log = worker->Log();
  CHECK(Occurrences(log, "pod_deletion_cost_failed") == 1);
  CHECK_THAT(log, Catch::Contains("403") && Catch::Contains("pods is forbidden"));

  rig.api.Answer("200");
  REQUIRE(WaitFor([&] { return Occurrences(worker->Log(), "pod_deletion_cost_recovered") == 1; },
                  seconds(25)));
  const size_t writes = rig.api.Requests().size();
  std::this_thread::sleep_for(seconds(2));
  CHECK(rig.api.Requests().size() == writes);  // accepted: nothing more to write
  log = worker->Log();
  CHECK(Occurrences(log, "pod_deletion_cost_failed") == 1);
  CHECK_THAT(log, !Catch::Contains("secret-token"));
  CheckServingThenStopsCleanly(*worker);
}

TEST_CASE("A hung API server does not hold up shutdown", "[worker][integration][pod_cost]") {
  PodCostRig rig("hang", "t");
  auto worker = rig.StartWorker();
  REQUIRE(WaitFor([&] { return rig.api.Requests().size() == 1; }, seconds(15)));
  CHECK(rig.fx.Client({"call", "warmpool.ping"})["status"] == "SUCCESS");  // tasks are not held up
  const auto start = std::chrono::steady_clock::now();
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(seconds(10)) == 0);
  // The request in flight is aborted: well under curl's 5 s timeout.
  CHECK(std::chrono::steady_clock::now() - start < seconds(3));
}

TEST_CASE("Outside a pod the pod deletion cost flag fails at start, naming what is missing",
          "[worker][integration][pod_cost]") {
  WorkerFixture fx;
  // Empty values count as unset, whatever the environment running the test has.
  auto worker = fx.StartWorker({"--pod-deletion-cost"}, "warmpool@test",
                               {{"POD_NAME", ""},
                                {"POD_NAMESPACE", ""},
                                {"KUBERNETES_SERVICE_HOST", ""},
                                {"WARMPOOL_KUBE_API", ""},
                                {"WARMPOOL_KUBE_TOKEN_FILE", fx.dir + "/no-token"}});
  CHECK(worker->Wait(seconds(10)) == 2);
  const std::string log = worker->Log();
  for (const char* missing : {"--pod-deletion-cost", "POD_NAME", "POD_NAMESPACE",
                              "KUBERNETES_SERVICE_HOST", "/no-token"}) {
    CHECK_THAT(log, Catch::Contains(missing));
  }
}

}  // namespace
}  // namespace warmpool::testing
