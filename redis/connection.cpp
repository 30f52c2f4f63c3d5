#include "redis/connection.h"

#include <hiredis/hiredis.h>

#include "redis/errors.h"
#include "redis/sentinel.h"
#include "redis/socket_stream.h"

namespace warmpool {
namespace {

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

void RedisReaderDeleter::operator()(redisReader* reader) const { redisReaderFree(reader); }
void RedisReplyDeleter::operator()(redisReply* reply) const { freeReplyObject(reply); }

RedisConnection::RedisConnection(const RedisEndpoint& endpoint)
    : endpoint_(endpoint),
      label_("redis " + endpoint.Redacted()),
      command_timeout_(endpoint.command_timeout) {
  if (!endpoint.uses_sentinel()) {
    Connect(endpoint.host, endpoint.port);
    return;
  }
  // Asked again on every connect, so a connection replacing a broken one after a failover
  // reaches the new master.
  const RedisHostPort master = ResolveSentinelMaster(endpoint);
  label_.append(" (master ").append(master.host).append(":");
  label_.append(std::to_string(master.port)).append(")");
  Connect(master.host, master.port);
  // Between a failover and the Sentinels' update, the old address may be a replica.
  RedisReplyPtr reply;
  try {
    reply = Command({"ROLE"});
  } catch (const RedisReplyError& e) {
    if (std::string_view(e.what()).find("NOPERM") != std::string_view::npos) return;  // ACL
    throw;
  }
  const auto role = ReplyElements(reply.get());
  if (role.empty() || ReplyString(role.front()) != "master") {
    broken_ = true;
    throw RedisIoError(label_ + ": the Sentinels' master answers ROLE '" +
                       (role.empty() ? std::string("?") : ReplyString(role.front())) +
                       "', not master (failover in progress?)");
  }
}

RedisConnection::RedisConnection(RedisConnection&&) noexcept = default;
RedisConnection& RedisConnection::operator=(RedisConnection&&) noexcept = default;
RedisConnection::~RedisConnection() = default;

void RedisConnection::Connect(const std::string& host, int port) {
  socket_ =
      std::make_unique<SocketStream>(host, port, endpoint_.tls, endpoint_.connect_timeout, label_);
  reader_.reset(redisReaderCreate());
  if (!reader_) throw RedisIoError(label_ + ": out of memory");
  if (!endpoint_.password.empty()) {
    RedisArgs auth = {"AUTH"};
    if (!endpoint_.username.empty()) auth.push_back(endpoint_.username);
    auth.push_back(endpoint_.password);
    Command(auth);
  }
  if (endpoint_.db != 0) Command({"SELECT", std::to_string(endpoint_.db)});
}

void RedisConnection::SetCommandTimeout(std::chrono::milliseconds timeout) {
  command_timeout_ = timeout;
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
  char* formatted = nullptr;
  const int len =
      redisFormatCommandArgv(&formatted, static_cast<int>(args.size()), argv.data(), lens.data());
  if (len < 0 || formatted == nullptr) {
    broken_ = true;
    throw RedisIoError(label_ + ": send " + DescribeCommand(args) + ": out of memory");
  }
  pending_.append(formatted, static_cast<size_t>(len));
  redisFreeCommand(formatted);
}

void RedisConnection::Flush() {
  if (pending_.empty()) return;
  try {
    socket_->WriteAll(pending_, command_timeout_);
  } catch (const RedisError&) {
    broken_ = true;
    throw;
  }
  pending_.clear();
}

RedisReplyPtr RedisConnection::ReadReply() {
  if (broken_) throw RedisIoError(label_ + ": connection is broken");
  Flush();
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_.get(), &raw) != REDIS_OK) {
      broken_ = true;
      throw RedisProtocolError(label_ + ": read reply: " + reader_->errstr);
    }
    if (raw != nullptr) {
      RedisReplyPtr reply(static_cast<redisReply*>(raw));
      // A demoted master answers writes with READONLY: reconnect through the Sentinels.
      if (endpoint_.uses_sentinel() && reply->type == REDIS_REPLY_ERROR &&
          std::string_view(reply->str, reply->len).starts_with("READONLY")) {
        broken_ = true;
      }
      return reply;
    }
    char buf[16 * 1024];
    try {
      const size_t n = socket_->ReadSome(buf, sizeof(buf), command_timeout_);
      if (redisReaderFeed(reader_.get(), buf, n) != REDIS_OK) {
        throw RedisProtocolError(label_ + ": read reply: " + reader_->errstr);
      }
    } catch (const RedisError&) {
      broken_ = true;
      throw;
    }
  }
}

RedisReplyPtr RedisConnection::Command(const RedisArgs& args) {
  Send(args);
  RedisReplyPtr reply = ReadReply();
  if (reply->type == REDIS_REPLY_ERROR) {
    throw RedisReplyError(label_ + ": " + DescribeCommand(args) + ": " +
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
