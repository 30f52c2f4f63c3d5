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

std::string TooDeepError() {
  return "nests arrays/objects deeper than " + std::to_string(kMaxJsonDepth) + " levels";
}

constexpr const char* kInvalidError = "is not valid JSON";

// nlohmann's parser is iterative, so it is safe at any depth once the depth check passed.
template <typename Json>
Json ParseWithNlohmann(std::string_view text, std::string* error) {
  if (!JsonDepthWithin(text)) {
    if (error) *error = TooDeepError();
    return Json(Json::value_t::discarded);
  }
  Json out = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded() && error) *error = kInvalidError;
  return out;
}

}  // namespace

bool JsonDepthWithin(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, '"' included
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

nlohmann::json ParseJson(std::string_view text, std::string* error) {
  // The per-thread parser keeps buffers sized for the largest document it has parsed: leave rare
  // huge ones (large task arguments) to nlohmann rather than pin that much memory per thread.
  constexpr size_t kFastPathMaxBytes = size_t{1} << 20;
  if (text.size() > kFastPathMaxBytes) return ParseWithNlohmann<nlohmann::json>(text, error);
  // simdjson refuses documents deeper than its default depth, which equals ours (the tests check
  // the boundary on both paths); one it refuses goes through the depth check below.
  static_assert(simdjson::DEFAULT_MAX_DEPTH == kMaxJsonDepth);
  thread_local simdjson::dom::parser parser(kFastPathMaxBytes);
  simdjson::dom::element root;
  // realloc_if_needed: copies `text` into the parser's padded buffer (simdjson reads past the end).
  if (parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root) ==
      simdjson::SUCCESS) {
    return Convert(root);
  }
  return ParseWithNlohmann<nlohmann::json>(text, error);
}

nlohmann::ordered_json ParseOrderedJson(std::string_view text, std::string* error) {
  return ParseWithNlohmann<nlohmann::ordered_json>(text, error);
}

}  // namespace warmpool
