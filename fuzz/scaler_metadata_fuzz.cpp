// libFuzzer harness: a ScaledObject's trigger metadata. The input is one `key=value` per line
// (the first '=' splits), as KEDA hands the scaler a string map.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "fuzz/metadata_lines.h"
#include "policy/scaler_metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warmpool::policy;
  const std::map<std::string, std::string> raw = warmpool::fuzz::ParseMetadataLines(
      std::string_view(reinterpret_cast<const char*>(data), size));
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
