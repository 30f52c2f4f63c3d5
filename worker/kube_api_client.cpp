#include "worker/kube_api_client.h"

#include <algorithm>
#include <cstdlib>
#include <curl/curl.h>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "common/read_file.h"

namespace warmpool::worker {
namespace {

constexpr long kTimeoutMs = 5000;
constexpr size_t kMaxBody = 64 * 1024;  // enough for a Status object; a Pod answer is cut

size_t CollectBody(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  const size_t len = size * count;
  if (body->size() < kMaxBody) body->append(data, std::min(len, kMaxBody - body->size()));
  return len;
}

// Called by curl about once a second and on progress: a non-zero return aborts the request.
int CheckCancel(void* cancel, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(cancel)->load() ? 1 : 0;
}

std::string TrimRight(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// Why the API server refused: its Status object's message (a 403 names the verb and resource
// RBAC lacks), else the start of the body.
std::string RefusalReason(long status, const std::string& body) {
  auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("message") && json["message"].is_string()) {
    return json["message"].get<std::string>();
  }
  return body.empty() ? "HTTP " + std::to_string(status) : body.substr(0, 200);
}

using CurlPtr = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
using HeadersPtr = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

}  // namespace

KubeApiClient::KubeApiClient(KubeApiConfig config) : config_(std::move(config)) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

ApiResult KubeApiClient::PatchPod(const std::string& merge_patch, const std::atomic<bool>& cancel) {
  ApiResult result;
  const std::string token = TrimRight(ReadFileContents(config_.token_file).value_or(""));
  if (token.empty()) {
    result.reason = "cannot read a token from " + config_.token_file;
    return result;
  }
  CurlPtr curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) {
    result.reason = "curl_easy_init failed";
    return result;
  }
  curl_slist* list = nullptr;
  for (const std::string& header :
       {"Authorization: Bearer " + token, std::string("Content-Type: application/merge-patch+json"),
        std::string("Accept: application/json")}) {
    curl_slist* grown = curl_slist_append(list, header.c_str());
    if (grown == nullptr) {
      curl_slist_free_all(list);
      result.reason = "curl_slist_append failed";
      return result;
    }
    list = grown;
  }
  const HeadersPtr headers(list, curl_slist_free_all);
  const std::string url = config_.base_url + config_.PodPath();
  std::string body;
  char error[CURL_ERROR_SIZE] = {};
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PATCH");
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, merge_patch.c_str());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(merge_patch.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM in a threaded process
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, kTimeoutMs);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, kTimeoutMs);
  if (!config_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, config_.ca_file.c_str());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, CollectBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, CheckCancel);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(&cancel));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  const CURLcode code = curl_easy_perform(h);
  if (code != CURLE_OK) {
    result.reason = code == CURLE_ABORTED_BY_CALLBACK ? "cancelled"
                    : error[0]                        ? std::string(error)
                                                      : curl_easy_strerror(code);
    return result;
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &result.http_status);
  result.ok = result.http_status >= 200 && result.http_status < 300;
  if (!result.ok) result.reason = RefusalReason(result.http_status, body);
  return result;
}

EnvMap KubeEnvFromProcess() {
  EnvMap env;
  for (const char* name :
       {"POD_NAME", "POD_NAMESPACE", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT",
        "WARMPOOL_KUBE_API", "WARMPOOL_KUBE_TOKEN_FILE"}) {
    if (const char* value = std::getenv(name)) env[name] = value;
  }
  return env;
}

std::optional<std::string> ReadFileContents(const std::string& path) {
  std::string text;
  if (!ReadWholeFile(path, &text)) return std::nullopt;
  return text;
}

}  // namespace warmpool::worker
