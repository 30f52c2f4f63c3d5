#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "redis/connection.h"

namespace warmpool {

// A Lua script run with EVALSHA. The SHA comes from SCRIPT LOAD on first use and again after
// NOSCRIPT (a restarted Redis forgets scripts), so callers never see NOSCRIPT. Thread-safe.
class LuaScript {
 public:
  explicit LuaScript(std::string source) : source_(std::move(source)) {}
  LuaScript(const LuaScript&) = delete;
  LuaScript& operator=(const LuaScript&) = delete;

  // Runs the script on `conn`. Throws RedisReplyError for a script error, RedisError on I/O.
  RedisReplyPtr Run(RedisConnection& conn, const std::vector<std::string>& keys,
                    const std::vector<std::string>& args);

  // Runs the script once per call in one pipeline (one round trip) and returns the replies in
  // order. Throws like Run() on the first error reply.
  struct Call {
    std::vector<std::string> keys;
    std::vector<std::string> args;
  };
  std::vector<RedisReplyPtr> RunMany(RedisConnection& conn, const std::vector<Call>& calls);

  // For callers that pipeline several scripts themselves: the SHA (loaded on first use), the
  // EVALSHA command for a call, and a reload after a NOSCRIPT reply.
  std::string Sha(RedisConnection& conn);
  static RedisArgs EvalShaCommand(const std::string& sha, const Call& call);
  void Reload(RedisConnection& conn) { Load(conn); }

 private:
  std::string Load(RedisConnection& conn);

  const std::string source_;
  std::mutex mu_;
  std::string sha_;  // guarded by mu_; empty until loaded
};

}  // namespace warmpool
