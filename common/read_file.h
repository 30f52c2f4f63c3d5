#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace warmpool {

// Reads the whole file at `path` (bytes as they are) into *out. False when it cannot be opened
// or read; *out is then unspecified. Inline: the small tools that use it link no library of ours.
inline bool ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buf;
  buf << in.rdbuf();
  *out = buf.str();
  return !in.bad();
}

}  // namespace warmpool
