#include "redis/connection.h"

#include <cerrno>
#include <cstring>

#include <hiredis/hiredis.h>

#include "redis/errors.h"

namespace warmpool {
namespace {

timeval ToTimeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

std::string DescribeCommand(const RedisArgs& args) {
  // The verb only: arguments may carry passwords or payloads.
  return args.empty() ? std::string("<empty>") : args.front();
}

// A typed read met another type. An error reply (e.g. "NOAUTH Authentication required." in a
// pipeline) is thrown as what it is, with the server's text (which never holds our password).
[[noreturn]] void ThrowUnexpectedReply(const redisReply* reply, const char* expected) {
  if (reply->type == REDIS_REPLY_ERROR) {
    throw RedisReplyError("redis error reply: " + std::string(reply->str, reply->len));
  }
  throw RedisProtocolError(std::string("expected ") + expected + " reply, got type " +
                           std::to_string(reply->type));
}

}  // namespace

void RedisContextDeleter::operator()(redisContext* ctx) const { redisFree(ctx); }
void RedisReplyDeleter::operator()(redisReply* reply) const { freeReplyObject(reply); }

RedisConnection::RedisConnection(const RedisEndpoint& endpoint) : endpoint_(endpoint) {
  redisContext* raw = endpoint.connect_timeout.count() > 0
                          ? redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port,
                                                    ToTimeval(endpoint.connect_timeout))
                          : redisConnect(endpoint.host.c_str(), endpoint.port);
  if (raw == nullptr) throw RedisIoError("redis " + endpoint.Redacted() + ": out of memory");
  ctx_.reset(raw);
  if (ctx_->err) ThrowIoError("connect");
  if (endpoint.command_timeout.count() > 0) SetCommandTimeout(endpoint.command_timeout);
  if (!endpoint.password.empty()) {
    RedisArgs auth = {"AUTH"};
    if (!endpoint.username.empty()) auth.push_back(endpoint.username);
    auth.push_back(endpoint.password);
    Command(auth);
  }
  if (endpoint.db != 0) Command({"SELECT", std::to_string(endpoint.db)});
}

RedisConnection::~RedisConnection() = default;

void RedisConnection::SetCommandTimeout(std::chrono::milliseconds timeout) {
  if (redisSetTimeout(ctx_.get(), ToTimeval(timeout)) != REDIS_OK) ThrowIoError("set timeout");
}

void RedisConnection::ThrowIoError(std::string_view what) {
  broken_ = true;
  std::string prefix = "redis " + endpoint_.Redacted() + ": " + std::string(what) + ": ";
  int err = ctx_ ? ctx_->err : REDIS_ERR_OTHER;
  std::string detail = ctx_ ? std::string(ctx_->errstr) : std::string("no context");
  if (err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT)) {
    throw RedisTimeoutError(prefix + "timed out after " +
                            std::to_string(endpoint_.command_timeout.count()) + " ms");
  }
  if (detail.find("timed out") != std::string::npos ||
      detail.find("Resource temporarily unavailable") != std::string::npos) {
    throw RedisTimeoutError(prefix + "timed out (" + detail + ")");
  }
  if (err == REDIS_ERR_PROTOCOL) throw RedisProtocolError(prefix + detail);
  throw RedisIoError(prefix + detail);
}

void RedisConnection::Send(const RedisArgs& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAppendCommandArgv(ctx_.get(), static_cast<int>(args.size()), argv.data(), lens.data()) !=
      REDIS_OK) {
    ThrowIoError("send " + DescribeCommand(args));
  }
}

RedisReplyPtr RedisConnection::ReadReply() {
  void* raw = nullptr;
  if (redisGetReply(ctx_.get(), &raw) != REDIS_OK || raw == nullptr) ThrowIoError("read reply");
  return RedisReplyPtr(static_cast<redisReply*>(raw));
}

RedisReplyPtr RedisConnection::Command(const RedisArgs& args) {
  Send(args);
  RedisReplyPtr reply = ReadReply();
  if (reply->type == REDIS_REPLY_ERROR) {
    throw RedisReplyError("redis " + endpoint_.Redacted() + ": " + DescribeCommand(args) + ": " +
                          std::string(reply->str, reply->len));
  }
  return reply;
}

std::vector<RedisReplyPtr> RedisConnection::Pipeline(const std::vector<RedisArgs>& commands) {
  for (const auto& c : commands) Send(c);
  std::vector<RedisReplyPtr> replies;
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) replies.push_back(ReadReply());
  return replies;
}

long long ReplyInteger(const redisReply* reply) {
  if (reply->type != REDIS_REPLY_INTEGER) ThrowUnexpectedReply(reply, "an integer");
  return reply->integer;
}

std::string ReplyString(const redisReply* reply) {
  if (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_STATUS) {
    ThrowUnexpectedReply(reply, "a string");
  }
  return std::string(reply->str, reply->len);
}

bool ReplyIsNil(const redisReply* reply) { return reply->type == REDIS_REPLY_NIL; }
bool ReplyIsError(const redisReply* reply) { return reply->type == REDIS_REPLY_ERROR; }

const std::vector<redisReply*> ReplyElements(const redisReply* reply) {
  if (reply->type != REDIS_REPLY_ARRAY) ThrowUnexpectedReply(reply, "an array");
  return std::vector<redisReply*>(reply->element, reply->element + reply->elements);
}

}  // namespace warmpool
