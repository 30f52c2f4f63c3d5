#include "common/json_parse.h"

#include <simdjson.h>

namespace warmpool {
namespace {

// nlohmann stores a non-negative integer as number_unsigned and a negative one as
// number_integer; simdjson uses int64 for both when it fits. Keep nlohmann's types.
nlohmann::json Convert(simdjson::dom::element e) {
  using Type = simdjson::dom::element_type;
  switch (e.type()) {
    case Type::OBJECT: {
      nlohmann::json out = nlohmann::json::object();
      // Named: iterating the temporary simdjson_result's value would dangle.
      const simdjson::dom::object object = e.get_object().value_unsafe();
      // A repeated key: the last wins, as in nlohmann.
      for (const auto field : object) out[std::string(field.key)] = Convert(field.value);
      return out;
    }
    case Type::ARRAY: {
      nlohmann::json out = nlohmann::json::array();
      const simdjson::dom::array array = e.get_array().value_unsafe();
      for (const auto item : array) out.push_back(Convert(item));
      return out;
    }
    case Type::STRING:
      return std::string(e.get_string().value_unsafe());
    case Type::INT64: {
      const int64_t v = e.get_int64().value_unsafe();
      return v >= 0 ? nlohmann::json(static_cast<uint64_t>(v)) : nlohmann::json(v);
    }
    case Type::UINT64:
      return e.get_uint64().value_unsafe();
    case Type::DOUBLE:
      return e.get_double().value_unsafe();
    case Type::BOOL:
      return e.get_bool().value_unsafe();
    case Type::NULL_VALUE:
      return nullptr;
  }
  return nullptr;
}

}  // namespace

nlohmann::json ParseJson(std::string_view text) {
  // The per-thread parser keeps buffers sized for the largest document it has parsed: leave rare
  // huge ones (large task arguments) to nlohmann rather than pin that much memory per thread.
  constexpr size_t kFastPathMaxBytes = size_t{1} << 20;
  if (text.size() > kFastPathMaxBytes) {
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  }
  thread_local simdjson::dom::parser parser(kFastPathMaxBytes);
  simdjson::dom::element root;
  // realloc_if_needed: copies `text` into the parser's padded buffer (simdjson reads past the end).
  if (parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root) ==
      simdjson::SUCCESS) {
    return Convert(root);
  }
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace warmpool
