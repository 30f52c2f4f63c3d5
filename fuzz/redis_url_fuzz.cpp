// libFuzzer harness: Redis URLs (--redis flags, REDIS_URL) and `redisAddress` metadata.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "redis/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string error;
  if (auto endpoint = warmpool::ParseRedisUrl(input, &error)) {
    // The redacted form (logs, errors) names the same server: it parses back to it.
    std::string again_error;
    auto again = warmpool::ParseRedisUrl(endpoint->Redacted(), &again_error);
    if (!again || again->host != endpoint->host || again->port != endpoint->port ||
        again->db != endpoint->db) {
      std::abort();
    }
  } else if (error.empty()) {
    std::abort();  // a refusal always says why
  }
  error.clear();
  if (!warmpool::ParseRedisAddress(input, &error) && error.empty()) std::abort();
  return 0;
}
