#pragma once

#include <string_view>
#include <vector>

namespace warmpool {

// The comma-separated parts of `text`, every one and in order: "a,,b" is {"a", "", "b"} and ""
// is {""}. Callers trim or drop empty parts as their format needs. Inline: header-only users
// (options parsers, the simulator's CSV reader) link no library of ours for it.
inline std::vector<std::string_view> SplitOnComma(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// `text` without the spaces and tabs around it.
inline std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace warmpool
