#include "common/status.h"

namespace warmpool {

std::string Status::ToString() const {
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

}  // namespace warmpool
