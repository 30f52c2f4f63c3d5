#pragma once

#include <stdexcept>
#include <string>

namespace warmpool {

// The Redis adapter's error dialect (STYLE 10), by what a caller can do:
//   RedisIoError       the connection failed (refused, reset); retry after reconnect.
//   RedisTimeoutError  a connect or command deadline passed; also an I/O error.
//   RedisProtocolError the server sent something we cannot parse; the connection is dropped.
//   RedisReplyError    the server answered with an error reply (WRONGTYPE, NOAUTH, ...).
// Messages name the endpoint (redacted, never the password) and the command.
class RedisError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class RedisIoError : public RedisError {
 public:
  using RedisError::RedisError;
};
class RedisTimeoutError : public RedisIoError {
 public:
  using RedisIoError::RedisIoError;
};
class RedisProtocolError : public RedisError {
 public:
  using RedisError::RedisError;
};
class RedisReplyError : public RedisError {
 public:
  using RedisError::RedisError;
};

}  // namespace warmpool
