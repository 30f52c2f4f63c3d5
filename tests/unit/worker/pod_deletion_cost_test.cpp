// --pod-deletion-cost, the pure parts: the cost, the merge patch and the in-cluster config.
#include "worker/pod_deletion_cost.h"

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace warmpool::worker {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

TEST_CASE("The cost counts the tasks running for 10 s or more", "[worker][pod_cost]") {
  const auto now = Clock::now();
  CHECK(PodDeletionCost({}, now) == 0);
  CHECK(PodDeletionCost({now}, now) == 0);
  CHECK(PodDeletionCost({now - milliseconds(9999)}, now) == 0);  // short tasks cost no write
  CHECK(PodDeletionCost({now - seconds(10)}, now) == 1);         // the threshold counts
  CHECK(PodDeletionCost({now - seconds(3600), now - seconds(11), now - seconds(2)}, now) == 2);
  CHECK(PodDeletionCost({now - seconds(2)}, now, seconds(1)) == 1);
}

TEST_CASE("The merge patch sets only the annotation, as a string", "[worker][pod_cost]") {
  CHECK(PodDeletionCostPatch(0) ==
        R"({"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":"0"}}})");
  const auto patch = nlohmann::json::parse(PodDeletionCostPatch(3));
  CHECK(patch["metadata"]["annotations"][kPodDeletionCostAnnotation] == "3");
}

// A file system with the service account's files, as the kubelet mounts them.
FileReader Files(std::map<std::string, std::string> files) {
  return [files](const std::string& path) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

const std::string kToken = std::string(kServiceAccountDir) + "/token";
const std::string kCa = std::string(kServiceAccountDir) + "/ca.crt";

EnvMap InCluster() {
  return {{"POD_NAME", "warmpool-worker-7d9f-x2x"},
          {"POD_NAMESPACE", "warmpool"},
          {"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
          {"KUBERNETES_SERVICE_PORT", "443"}};
}

TEST_CASE("In a pod the API server, token and CA come from the service account",
          "[worker][pod_cost]") {
  KubeApiConfig c;
  REQUIRE(ResolveKubeApiConfig(InCluster(), Files({{kToken, "tok\n"}, {kCa, "PEM"}}), &c).ok());
  CHECK(c.base_url == "https://10.0.0.1:443");
  CHECK(c.token_file == kToken);
  CHECK(c.ca_file == kCa);
  CHECK(c.PodPath() == "/api/v1/namespaces/warmpool/pods/warmpool-worker-7d9f-x2x");

  EnvMap v6 = InCluster();
  v6["KUBERNETES_SERVICE_HOST"] = "fd00::1";
  REQUIRE(ResolveKubeApiConfig(v6, Files({{kToken, "tok"}, {kCa, "PEM"}}), &c).ok());
  CHECK(c.base_url == "https://[fd00::1]:443");
}

TEST_CASE("The test overrides replace the API server and the token file", "[worker][pod_cost]") {
  EnvMap env = {{"POD_NAME", "p"},
                {"POD_NAMESPACE", "ns"},
                {"WARMPOOL_KUBE_API", "http://127.0.0.1:8001/"},
                {"WARMPOOL_KUBE_TOKEN_FILE", "/tmp/t"}};
  KubeApiConfig c;
  REQUIRE(ResolveKubeApiConfig(env, Files({{"/tmp/t", "tok"}}), &c).ok());
  CHECK(c.base_url == "http://127.0.0.1:8001");
  CHECK(c.token_file == "/tmp/t");
  CHECK(c.ca_file.empty());
  // https: the pod's CA when there is one, else the system's.
  env["WARMPOOL_KUBE_API"] = "https://api.example:6443";
  REQUIRE(ResolveKubeApiConfig(env, Files({{"/tmp/t", "tok"}, {kCa, "PEM"}}), &c).ok());
  CHECK(c.ca_file == kCa);
  REQUIRE(ResolveKubeApiConfig(env, Files({{"/tmp/t", "tok"}}), &c).ok());
  CHECK(c.ca_file.empty());
}

TEST_CASE("Missing in-cluster config is an error naming every missing piece",
          "[worker][pod_cost]") {
  KubeApiConfig c;
  Status s = ResolveKubeApiConfig({}, Files({}), &c);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == Status::Code::kInvalidArgument);
  for (const char* missing : {"POD_NAME", "POD_NAMESPACE", "KUBERNETES_SERVICE_HOST",
                              kToken.c_str(), "automountServiceAccountToken"}) {
    CHECK_THAT(s.message(), Catch::Contains(missing));
  }

  // In a pod without a mounted token (automountServiceAccountToken: false).
  s = ResolveKubeApiConfig(InCluster(), Files({}), &c);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains(kToken) && Catch::Contains(kCa));
  CHECK_THAT(s.message(), !Catch::Contains("POD_NAME"));

  // An empty token file is no token; an empty variable is unset.
  EnvMap env = InCluster();
  env["POD_NAMESPACE"] = "";
  s = ResolveKubeApiConfig(env, Files({{kToken, "\n"}, {kCa, "PEM"}}), &c);
  CHECK_THAT(s.message(), Catch::Contains("POD_NAMESPACE is not set") && Catch::Contains(kToken));
}

TEST_CASE("Names that are not Kubernetes names and non-HTTP URLs are refused",
          "[worker][pod_cost]") {
  const FileReader files = Files({{kToken, "tok"}, {kCa, "PEM"}});
  KubeApiConfig c;
  EnvMap env = InCluster();
  env["POD_NAME"] = "../../secrets/x";
  CHECK_THAT(ResolveKubeApiConfig(env, files, &c).message(), Catch::Contains("POD_NAME"));
  env = InCluster();
  env["POD_NAMESPACE"] = "Prod";
  CHECK_THAT(ResolveKubeApiConfig(env, files, &c).message(), Catch::Contains("POD_NAMESPACE"));
  env = InCluster();
  env["WARMPOOL_KUBE_API"] = "127.0.0.1:8001";
  CHECK_THAT(ResolveKubeApiConfig(env, files, &c).message(), Catch::Contains("WARMPOOL_KUBE_API"));
}

}  // namespace
}  // namespace warmpool::worker
