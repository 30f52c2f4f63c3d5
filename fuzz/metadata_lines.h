#pragma once

// The harnesses' text form of a ScaledObject's trigger metadata: one `key=value` per line (the
// first '=' splits; lines without one are skipped), as KEDA hands the scaler a string map.
#include <map>
#include <string>
#include <string_view>

namespace warmpool::fuzz {

inline std::map<std::string, std::string> ParseMetadataLines(std::string_view text) {
  std::map<std::string, std::string> raw;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) {
      raw[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    }
  }
  return raw;
}

}  // namespace warmpool::fuzz
