#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace warmpool {

// Parses `text` into the same nlohmann::json value, number types included, as
// nlohmann::json::parse(text, nullptr, false): a discarded value (is_discarded()) when it is not
// valid JSON. (One exception: an integer -0 comes back as unsigned 0, nlohmann's signed 0; equal
// value and text.) Well-formed documents go through simdjson, which lexes a kombu envelope about
// three times faster than nlohmann; anything simdjson refuses (invalid UTF-8 or JSON, integers
// beyond 64 bits, nesting deeper than 1024) is handed to nlohmann, so results and edge cases are
// nlohmann's, and so are documents over 1 MiB (the per-thread simdjson buffers stay small).
// Thread-safe (one simdjson parser per thread).
nlohmann::json ParseJson(std::string_view text);

}  // namespace warmpool
