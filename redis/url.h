#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace warmpool {

// Where and how to reach one Redis server. Parsed from a URL; credentials stay here and are never
// printed (see Redacted()).
struct RedisEndpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;                                       // SELECTed after connect; 0 = default DB
  std::string username;                             // empty = no ACL user (AUTH with password only)
  std::string password;                             // empty = no AUTH
  std::chrono::milliseconds connect_timeout{1000};  // 0 = wait forever (never used by warmpool)
  std::chrono::milliseconds command_timeout{1000};  // per command; 0 = wait forever

  // "redis://host:port/db" with the password replaced by "***"; safe for logs and errors.
  std::string Redacted() const;
};

// Parses "redis://[[user]:pass@]host[:port][/db]" (also "host:port[/db]" without a scheme).
// Returns nullopt and sets *error to a message naming the problem on bad input. Pure.
std::optional<RedisEndpoint> ParseRedisUrl(std::string_view url, std::string* error);

// Parses "host:port[/db]" (no credentials allowed), as the scaler's `redisAddress` metadata.
std::optional<RedisEndpoint> ParseRedisAddress(std::string_view address, std::string* error);

}  // namespace warmpool
