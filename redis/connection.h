#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "redis/url.h"

struct redisReader;
struct redisReply;

namespace warmpool {

class SocketStream;

struct RedisReaderDeleter {
  void operator()(redisReader* reader) const;
};
struct RedisReplyDeleter {
  void operator()(redisReply* reply) const;
};
using RedisReaderPtr = std::unique_ptr<redisReader, RedisReaderDeleter>;
using RedisReplyPtr = std::unique_ptr<redisReply, RedisReplyDeleter>;

using RedisArgs = std::vector<std::string>;

// One blocking Redis connection (RESP2) with connect and command timeouts. Move-only.
// Bytes go over a SocketStream (TCP, or TLS for rediss://) and are formatted and parsed by
// hiredis' formatter and reader. Construction connects (for sentinel:// first asks the
// Sentinels where the master is, then checks ROLE), AUTHs and SELECTs; throws RedisError
// subclasses (redis/errors.h) on failure. After any I/O or protocol error the connection is
// broken() and must be replaced. Error replies (e.g. WRONGTYPE) are returned as replies by
// Pipeline() and thrown as RedisReplyError by Command(). Not thread-safe: one user at a time (see
// RedisPool).
class RedisConnection {
 public:
  explicit RedisConnection(const RedisEndpoint& endpoint);
  RedisConnection(RedisConnection&&) noexcept;
  RedisConnection& operator=(RedisConnection&&) noexcept;
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
  void Connect(const std::string& host, int port);
  void Flush();

  RedisEndpoint endpoint_;
  std::string label_;  // endpoint_.Redacted(), plus the master's address behind a Sentinel
  std::unique_ptr<SocketStream> socket_;
  RedisReaderPtr reader_;
  std::string pending_;  // formatted commands not yet written (sent by the next read)
  std::chrono::milliseconds command_timeout_;
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
