#include "scaler/request_limits.h"

#include <string>

#include "policy/scaler_metadata.h"

namespace warmpool::scaler {
namespace {

std::string TooLong(const std::string& what, std::string_view text, size_t max) {
  return what + " \"" + policy::Abbreviate(text, 64) + "\" is " + std::to_string(text.size()) +
         " bytes; at most " + std::to_string(max) + " accepted";
}

}  // namespace

Status CheckMetadataSize(const std::vector<std::pair<std::string_view, std::string_view>>& entries,
                         const RequestLimits& limits) {
  if (entries.size() > limits.max_entries) {
    return Status::InvalidArgument("scalerMetadata has " + std::to_string(entries.size()) +
                                   " entries; at most " + std::to_string(limits.max_entries) +
                                   " accepted");
  }
  size_t total = 0;
  for (const auto& [key, value] : entries) {
    if (key.size() > limits.max_key_bytes) {
      return Status::InvalidArgument(TooLong("scalerMetadata key", key, limits.max_key_bytes));
    }
    if (value.size() > limits.max_value_bytes) {
      return Status::InvalidArgument("scalerMetadata " + std::string(key) + ": value of " +
                                     std::to_string(value.size()) + " bytes; at most " +
                                     std::to_string(limits.max_value_bytes) + " accepted");
    }
    total += key.size() + value.size();
  }
  if (total > limits.max_total_bytes) {
    return Status::InvalidArgument("scalerMetadata is " + std::to_string(total) +
                                   " bytes in all; at most " +
                                   std::to_string(limits.max_total_bytes) + " accepted");
  }
  return Status::Ok();
}

Status CheckObjectName(std::string_view name, std::string_view ns, const RequestLimits& limits) {
  if (name.size() > limits.max_name_bytes) {
    return Status::InvalidArgument(TooLong("ScaledObject name", name, limits.max_name_bytes));
  }
  if (ns.size() > limits.max_namespace_bytes) {
    return Status::InvalidArgument(TooLong("namespace", ns, limits.max_namespace_bytes));
  }
  return Status::Ok();
}

}  // namespace warmpool::scaler
