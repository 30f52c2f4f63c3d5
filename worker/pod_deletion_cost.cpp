#include "worker/pod_deletion_cost.h"

#include <algorithm>

namespace warmpool::worker {
namespace {

std::string Get(const EnvMap& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// RFC 1123 names, as Kubernetes requires them of pods (subdomain) and namespaces (label). Also
// keeps the URL path free of '/', '?' and '%'.
bool IsDnsName(const std::string& s, size_t max_len, bool dots) {
  if (s.empty() || s.size() > max_len || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [dots](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (dots && c == '.');
  });
}

// A readable file with something in it.
bool Readable(const FileReader& read_file, const std::string& path) {
  auto text = read_file(path);
  return text && text->find_first_not_of(" \t\r\n") != std::string::npos;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// The API server's URL and CA; appends what is wrong to `problems`.
void ResolveServer(const EnvMap& env, const FileReader& read_file, KubeApiConfig& out,
                   std::vector<std::string>& problems) {
  const std::string default_ca = std::string(kServiceAccountDir) + "/ca.crt";
  if (std::string api = Get(env, "WARMPOOL_KUBE_API"); !api.empty()) {
    while (!api.empty() && api.back() == '/') api.pop_back();
    if (api.rfind("http://", 0) != 0 && api.rfind("https://", 0) != 0) {
      problems.push_back("WARMPOOL_KUBE_API '" + api + "' is not an http:// or https:// URL");
    }
    out.base_url = api;
    // An https override is verified with the pod's CA when there is one, else the system's.
    if (api.rfind("https://", 0) == 0 && Readable(read_file, default_ca)) out.ca_file = default_ca;
    return;
  }
  const std::string host = Get(env, "KUBERNETES_SERVICE_HOST");
  const std::string port = Get(env, "KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty()) {
    problems.push_back(
        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not running in a "
        "Kubernetes pod; WARMPOOL_KUBE_API overrides them for tests)");
    return;
  }
  // An IPv6 service address needs brackets in a URL.
  out.base_url =
      "https://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
  out.ca_file = default_ca;
  if (!Readable(read_file, default_ca)) {
    problems.push_back("cannot read the cluster CA " + default_ca +
                       " (automountServiceAccountToken: true on the pod)");
  }
}

}  // namespace

int PodDeletionCost(const std::vector<std::chrono::steady_clock::time_point>& running_since,
                    std::chrono::steady_clock::time_point now,
                    std::chrono::steady_clock::duration min_running) {
  return static_cast<int>(std::count_if(running_since.begin(), running_since.end(),
                                        [&](auto since) { return now - since >= min_running; }));
}

std::string PodDeletionCostPatch(int cost) {
  return std::string(R"({"metadata":{"annotations":{")") + kPodDeletionCostAnnotation + R"(":")" +
         std::to_string(cost) + R"("}}})";
}

std::string KubeApiConfig::PodPath() const {
  return "/api/v1/namespaces/" + pod_namespace + "/pods/" + pod_name;
}

Status ResolveKubeApiConfig(const EnvMap& env, const FileReader& read_file, KubeApiConfig* out) {
  KubeApiConfig config;
  std::vector<std::string> problems;
  config.pod_name = Get(env, "POD_NAME");
  config.pod_namespace = Get(env, "POD_NAMESPACE");
  if (config.pod_name.empty()) {
    problems.push_back("POD_NAME is not set (downward API: fieldRef metadata.name)");
  } else if (!IsDnsName(config.pod_name, 253, /*dots=*/true)) {
    problems.push_back("POD_NAME '" + config.pod_name + "' is not a Kubernetes pod name");
  }
  if (config.pod_namespace.empty()) {
    problems.push_back("POD_NAMESPACE is not set (downward API: fieldRef metadata.namespace)");
  } else if (!IsDnsName(config.pod_namespace, 63, /*dots=*/false)) {
    problems.push_back("POD_NAMESPACE '" + config.pod_namespace + "' is not a namespace name");
  }
  ResolveServer(env, read_file, config, problems);
  config.token_file = Get(env, "WARMPOOL_KUBE_TOKEN_FILE");
  if (config.token_file.empty()) config.token_file = std::string(kServiceAccountDir) + "/token";
  if (!Readable(read_file, config.token_file)) {
    problems.push_back("cannot read a service account token from " + config.token_file +
                       " (automountServiceAccountToken: true on the pod; "
                       "WARMPOOL_KUBE_TOKEN_FILE overrides the path)");
  }
  if (!problems.empty()) return Status::InvalidArgument(Join(problems));
  *out = std::move(config);
  return Status::Ok();
}

}  // namespace warmpool::worker
