#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace warmpool {

// The deepest nesting of arrays and objects a parsed document may have ("[]" is depth 1). Every
// walk over a parsed tree (nlohmann's copy, dump and ==, our repr and unwrap) recurses once per
// level on the caller's stack, so a message nested 50,000 deep overflows it (SIGSEGV). Python's
// json.loads, which a Celery worker decodes with, gives up below depth 1000 (its recursion
// limit), so any message a Python Celery worker accepts is within this limit. It is simdjson's
// default maximum depth too.
inline constexpr int kMaxJsonDepth = 1024;

// Whether `text` nests arrays/objects at most `max_depth` deep, counting brackets outside
// strings in one pass without building anything (exact for valid JSON). Pure.
bool JsonDepthWithin(std::string_view text, int max_depth = kMaxJsonDepth);

// Parses `text` into the same nlohmann::json value, number types included, as
// nlohmann::json::parse(text, nullptr, false): a discarded value (is_discarded()) when it is not
// valid JSON or nests deeper than kMaxJsonDepth; `error` (when given) then says which, as the
// end of a sentence about the document: "is not valid JSON" or "nests arrays/objects deeper than
// 1024 levels". (One exception: an integer -0 comes back as unsigned 0, nlohmann's signed 0;
// equal value and text.) Well-formed documents go through simdjson, which lexes a kombu
// envelope about three times faster than nlohmann; anything simdjson refuses (invalid UTF-8 or
// JSON, integers beyond 64 bits) is handed to nlohmann after the depth check, so results and
// edge cases are nlohmann's, and so are documents over 1 MiB (the per-thread simdjson buffers
// stay small). Thread-safe (one simdjson parser per thread).
nlohmann::json ParseJson(std::string_view text, std::string* error = nullptr);

// The same for nlohmann::ordered_json (keeps key order, for re-serialising kombu envelopes).
nlohmann::ordered_json ParseOrderedJson(std::string_view text, std::string* error = nullptr);

}  // namespace warmpool
