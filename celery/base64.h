#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace warmpool::celery {

// Standard base64 (RFC 4648 alphabet, '=' padding), as kombu's body_encoding='base64'. Pure.
std::string Base64Encode(std::string_view bytes);

// Decodes standard base64. Whitespace (\r \n space \t) is skipped, as Python's b64decode does
// with validate=False; missing trailing padding is accepted. Returns nullopt on any other
// character, on misplaced padding, or on a length that cannot be base64.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace warmpool::celery
