#include "worker/tasks/imagery_exceptions.h"

#include "worker/tasks/change_detection_task.h"

namespace warmpool::worker {

const char* PythonExceptionFor(imagery::ImageryError::Kind kind) {
  using Kind = imagery::ImageryError::Kind;
  switch (kind) {
    case Kind::kNotFound:
      return "FileNotFoundError";
    case Kind::kPermission:
      return "PermissionError";
    case Kind::kIo:
      return "OSError";
    case Kind::kDevice:
      return "RuntimeError";
    case Kind::kInvalidArgument:
    case Kind::kCorrupt:
    case Kind::kMismatch:
    case Kind::kUnsupported:
      break;
  }
  return "ValueError";
}

const char* PythonExceptionFor(const imagery::ImageryError& error) {
  if (const auto* arg = dynamic_cast<const imagery::TaskArgumentError*>(&error)) {
    return arg->type() == imagery::TaskArgumentError::Type::kTypeError ? "TypeError" : "ValueError";
  }
  return PythonExceptionFor(error.kind());
}

}  // namespace warmpool::worker
