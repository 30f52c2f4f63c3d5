// libFuzzer harness: a ScaledObject's trigger metadata. The input is one `key=value` per line
// (the first '=' splits), as KEDA hands the scaler a string map.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "policy/scaler_metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warmpool::policy;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> raw;
  while (!input.empty()) {
    const size_t eol = input.find('\n');
    const std::string_view line = input.substr(0, eol);
    input = eol == std::string_view::npos ? std::string_view() : input.substr(eol + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    raw[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  ParsedMetadata parsed;
  const warmpool::Status status = ParseScalerMetadata(raw, &parsed);
  if (status.ok()) {
    const ScalerMetadata& m = parsed.metadata;
    if (m.queues.empty() || m.tasks_per_replica < 1 || m.max_replicas < 1 ||
        m.min_warm_replicas < 0 || m.min_warm_replicas > m.max_replicas) {
      std::abort();  // the documented invariants the policy relies on
    }
  } else if (status.message().empty()) {
    std::abort();
  }
  return 0;
}
