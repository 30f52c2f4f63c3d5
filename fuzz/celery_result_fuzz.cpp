// libFuzzer harness: a stored celery-task-meta-<id> value (the worker reads its status before it
// runs a task again), and the JSON reader every Redis value goes through.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "celery/result.h"
#include "common/json_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  warmpool::celery::StoredStatus(input);
  // ParseJson promises nlohmann's value (simdjson is only a faster lexer) for every document
  // within kMaxJsonDepth, and a reason for every refusal.
  std::string why;
  const nlohmann::json fast = warmpool::ParseJson(input, &why);
  if (fast.is_discarded()) {
    if (why.empty()) std::abort();
    return 0;
  }
  const nlohmann::json slow = nlohmann::json::parse(input, nullptr, false);
  if (slow.is_discarded() || fast != slow) std::abort();
  return 0;
}
