#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "redis/url.h"

struct redisContext;
struct redisReply;

namespace warmpool {

struct RedisContextDeleter {
  void operator()(redisContext* ctx) const;
};
struct RedisReplyDeleter {
  void operator()(redisReply* reply) const;
};
using RedisContextPtr = std::unique_ptr<redisContext, RedisContextDeleter>;
using RedisReplyPtr = std::unique_ptr<redisReply, RedisReplyDeleter>;

using RedisArgs = std::vector<std::string>;

// One blocking hiredis connection (RESP2) with connect and command timeouts. Move-only.
// Construction connects, AUTHs and SELECTs; throws RedisError subclasses (redis_errors.h) on
// failure. After any I/O or protocol error the connection is broken() and must be replaced.
// Error replies (e.g. WRONGTYPE) are returned as replies by Pipeline() and thrown as
// RedisReplyError by Command(). Not thread-safe: one user at a time (see RedisPool).
class RedisConnection {
 public:
  explicit RedisConnection(const RedisEndpoint& endpoint);
  RedisConnection(RedisConnection&&) noexcept = default;
  RedisConnection& operator=(RedisConnection&&) noexcept = default;
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;
  ~RedisConnection();

  // Sends one command and waits for its reply. Throws RedisReplyError on an error reply.
  RedisReplyPtr Command(const RedisArgs& args);

  // Sends all commands in one write and reads all replies (one round trip). Error replies are
  // returned in place; I/O errors throw and break the connection.
  std::vector<RedisReplyPtr> Pipeline(const std::vector<RedisArgs>& commands);

  // Appends a command without reading its reply (for blocking commands read later with
  // ReadReply, e.g. BLMOVE during shutdown).
  void Send(const RedisArgs& args);
  // Reads one pending reply; throws RedisTimeoutError when none arrives in the command timeout.
  RedisReplyPtr ReadReply();

  // Changes the read/write timeout (e.g. longer for blocking pops). 0 = wait forever.
  void SetCommandTimeout(std::chrono::milliseconds timeout);

  bool broken() const { return broken_; }
  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  [[noreturn]] void ThrowIoError(std::string_view what);

  RedisEndpoint endpoint_;
  RedisContextPtr ctx_;
  bool broken_ = false;
};

// Reply helpers: typed reads that throw RedisProtocolError on a type mismatch (never a default),
// or RedisReplyError with the server's text when the reply is an error (NOAUTH, WRONGTYPE, ...).
long long ReplyInteger(const redisReply* reply);
std::string ReplyString(const redisReply* reply);  // status or bulk string
bool ReplyIsNil(const redisReply* reply);
bool ReplyIsError(const redisReply* reply);
const std::vector<redisReply*> ReplyElements(const redisReply* reply);  // REQUIRES: array

}  // namespace warmpool
