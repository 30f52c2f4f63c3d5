#include "redis/lua_script.h"

#include <hiredis/hiredis.h>

#include "redis/errors.h"

namespace warmpool {

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

std::string LuaScript::Sha(RedisConnection& conn) {
  {
    std::lock_guard lock(mu_);
    if (!sha_.empty()) return sha_;
  }
  return Load(conn);
}

RedisArgs LuaScript::EvalShaCommand(const std::string& sha, const Call& call) {
  RedisArgs cmd = {"EVALSHA", sha, std::to_string(call.keys.size())};
  cmd.insert(cmd.end(), call.keys.begin(), call.keys.end());
  cmd.insert(cmd.end(), call.args.begin(), call.args.end());
  return cmd;
}

std::vector<RedisReplyPtr> LuaScript::RunMany(RedisConnection& conn,
                                              const std::vector<Call>& calls) {
  std::string sha;
  {
    std::lock_guard lock(mu_);
    sha = sha_;
  }
  if (sha.empty()) sha = Load(conn);
  std::vector<RedisArgs> cmds;
  cmds.reserve(calls.size());
  for (const auto& c : calls) {
    RedisArgs cmd = {"EVALSHA", sha, std::to_string(c.keys.size())};
    cmd.insert(cmd.end(), c.keys.begin(), c.keys.end());
    cmd.insert(cmd.end(), c.args.begin(), c.args.end());
    cmds.push_back(std::move(cmd));
  }
  auto replies = conn.Pipeline(cmds);
  for (size_t i = 0; i < replies.size(); ++i) {
    if (!ReplyIsError(replies[i].get())) continue;
    std::string err(replies[i]->str, replies[i]->len);
    if (err.rfind("NOSCRIPT", 0) == 0) {
      replies[i] = Run(conn, calls[i].keys, calls[i].args);  // reloads the script
      continue;
    }
    throw RedisReplyError("redis " + conn.endpoint().Redacted() + ": EVALSHA: " + err);
  }
  return replies;
}

}  // namespace warmpool
