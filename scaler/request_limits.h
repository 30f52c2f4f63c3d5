#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace warmpool::scaler {

// Sizes a KEDA request may have. KEDA sends a ScaledObject's name and namespace (Kubernetes caps
// them at 253 and 63 bytes) and its trigger metadata (a few short strings); anything far larger
// is hostile or a mistake and is refused before it is parsed, cached or logged.
struct RequestLimits {
  size_t max_name_bytes = 253;
  size_t max_namespace_bytes = 63;
  size_t max_entries = 64;
  size_t max_key_bytes = 128;
  size_t max_value_bytes = 4096;
  size_t max_total_bytes = 32 * 1024;
  // gRPC's cap on one request message (KEDA's are about 1 KB): an oversized value up to this
  // is refused by CheckMetadataSize naming its key; a bigger message fails in gRPC
  // (RESOURCE_EXHAUSTED) before it is decoded.
  static constexpr int kMaxReceiveMessageBytes = 256 * 1024;
};

// InvalidArgument naming the offending key (abbreviated) and its size, or Ok. Pure.
Status CheckMetadataSize(const std::vector<std::pair<std::string_view, std::string_view>>& entries,
                         const RequestLimits& limits = {});
Status CheckObjectName(std::string_view name, std::string_view ns,
                       const RequestLimits& limits = {});

}  // namespace warmpool::scaler
