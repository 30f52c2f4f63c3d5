#include "worker/lua_script.h"

#include <hiredis/hiredis.h>

#include "common/redis_errors.h"

namespace warmpool::worker {

std::string LuaScript::Load(RedisConnection& conn) {
  std::string sha = ReplyString(conn.Command({"SCRIPT", "LOAD", source_}).get());
  std::lock_guard lock(mu_);
  sha_ = sha;
  return sha;
}

RedisReplyPtr LuaScript::Run(RedisConnection& conn, const std::vector<std::string>& keys,
                             const std::vector<std::string>& args) {
  std::string sha;
  {
    std::lock_guard lock(mu_);
    sha = sha_;
  }
  if (sha.empty()) sha = Load(conn);
  auto make = [&](const std::string& s) {
    RedisArgs cmd = {"EVALSHA", s, std::to_string(keys.size())};
    cmd.insert(cmd.end(), keys.begin(), keys.end());
    cmd.insert(cmd.end(), args.begin(), args.end());
    return cmd;
  };
  auto replies = conn.Pipeline({make(sha)});
  RedisReplyPtr reply = std::move(replies.front());
  if (ReplyIsError(reply.get())) {
    std::string err(reply->str, reply->len);
    if (err.rfind("NOSCRIPT", 0) == 0) {
      sha = Load(conn);
      return conn.Command(make(sha));
    }
    throw RedisReplyError("redis " + conn.endpoint().Redacted() + ": EVALSHA: " + err);
  }
  return reply;
}

}  // namespace warmpool::worker
