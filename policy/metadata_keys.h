#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace warmpool::policy {

// The trigger metadata keys as KEDA sends them, sorted into what warmpool reads. Pure data.
struct ResolvedKeys {
  // warmpool's keys and their values, `xFromEnv` already renamed to `x` (an explicit `x` wins).
  std::map<std::string, std::string> values;
  // `x` -> `xFromEnv` for each value that came from a FromEnv key, so errors name the key the
  // user wrote in the ScaledObject.
  std::map<std::string, std::string> written_as;
  // One message per key that is neither warmpool's nor KEDA's, naming the closest known key.
  std::vector<std::string> unknown;
};

// Sorts `given` (KEDA's scalerMetadata map) into ResolvedKeys; see ParseScalerMetadata for the
// conventions. Pure.
ResolvedKeys ResolveMetadataKeys(const std::map<std::string, std::string>& given);

// warmpool's keys of `given` as "key=value\x1e" in key order (`xFromEnv` read as `x`; KEDA's own
// keys and unknown keys left out): one text for metadata written alike. Pure.
std::string PolicyKeysOf(const std::map<std::string, std::string>& given);

// The known key (warmpool's or KEDA's) closest to `key` by edit distance (optimal string
// alignment, ignoring case; only the first 64 bytes of a longer key are compared). Pure.
std::string ClosestKnownKey(std::string_view key);

}  // namespace warmpool::policy
