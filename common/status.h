#pragma once

#include <string>
#include <utility>

namespace warmpool {

// Header-only so the pure policy library needs no other library.
// A value-type outcome for the pure core (LevelDB style): ok, or a code with a message a user can
// act on. Thread-compatible.
class Status {
 public:
  enum class Code { kOk, kInvalidArgument, kUnavailable, kNotFound, kInternal };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status Unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status Internal(std::string msg) { return {Code::kInternal, std::move(msg)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const {
    switch (code_) {
      case Code::kOk:
        return "OK";
      case Code::kInvalidArgument:
        return "INVALID_ARGUMENT: " + message_;
      case Code::kUnavailable:
        return "UNAVAILABLE: " + message_;
      case Code::kNotFound:
        return "NOT_FOUND: " + message_;
      case Code::kInternal:
        return "INTERNAL: " + message_;
    }
    return message_;
  }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace warmpool
