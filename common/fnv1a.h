#pragma once

#include <cstdint>
#include <string_view>

namespace warmpool {

// FNV-1a, 64 bit: a stable hash (same value in every process and build), for cache keys and
// Redis key names. Not for security. Pure.
inline uint64_t Fnv1a64(std::string_view s, uint64_t seed = 1469598103934665603ULL) {
  uint64_t h = seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace warmpool
