#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "worker/pod_deletion_cost.h"

namespace warmpool::worker {

// The outcome of one API request. `reason` never contains the token.
struct ApiResult {
  bool ok = false;
  long http_status = 0;  // 0 when no HTTP answer came (connect error, timeout, cancelled)
  std::string reason;    // the API server's Status message, or curl's error
};

// PATCHes the worker's own pod through the Kubernetes API (libcurl). Every request re-reads the
// token file (projected service account tokens rotate) and has 5 s connect and total timeouts.
// Thread-compatible: one caller at a time (the pod cost publisher's thread).
class KubeApiClient {
 public:
  explicit KubeApiClient(KubeApiConfig config);

  // PATCH PodPath() with `merge_patch` (application/merge-patch+json). `cancel` turning true
  // aborts the request within about a second (shutdown).
  ApiResult PatchPod(const std::string& merge_patch, const std::atomic<bool>& cancel);

  const KubeApiConfig& config() const { return config_; }

 private:
  const KubeApiConfig config_;
};

// The variables ResolveKubeApiConfig reads, from this process's environment.
EnvMap KubeEnvFromProcess();
// The whole file, or nullopt when it cannot be read (the FileReader of a real pod).
std::optional<std::string> ReadFileContents(const std::string& path);

}  // namespace warmpool::worker
