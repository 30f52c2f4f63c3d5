// The Python exception names a Celery client sees for imagery failures (FAILURE exc_type).
#include "worker/tasks/imagery_exceptions.h"

#include <string>

#include <catch2/catch.hpp>

#include "worker/tasks/change_detection_task.h"

using warmpool::imagery::ImageryError;
using warmpool::imagery::TaskArgumentError;
using warmpool::worker::PythonExceptionFor;

TEST_CASE("Each imagery error kind maps to its Python exception", "[imagery][exceptions]") {
  using Kind = ImageryError::Kind;
  const std::pair<Kind, std::string> table[] = {
      {Kind::kInvalidArgument, "ValueError"},
      {Kind::kNotFound, "FileNotFoundError"},
      {Kind::kPermission, "PermissionError"},
      {Kind::kCorrupt, "ValueError"},
      {Kind::kMismatch, "ValueError"},
      {Kind::kUnsupported, "ValueError"},
      {Kind::kIo, "OSError"},
      {Kind::kDevice, "RuntimeError"},
  };
  for (const auto& [kind, name] : table) {
    CHECK(PythonExceptionFor(kind) == name);
    CHECK(PythonExceptionFor(ImageryError(kind, "x")) == name);
  }
}

TEST_CASE("A task argument error is a TypeError or a ValueError as it says",
          "[imagery][exceptions]") {
  const TaskArgumentError type_error(TaskArgumentError::Type::kTypeError, "bad type");
  const TaskArgumentError value_error(TaskArgumentError::Type::kValueError, "bad value");
  CHECK(std::string(PythonExceptionFor(type_error)) == "TypeError");
  CHECK(std::string(PythonExceptionFor(value_error)) == "ValueError");
  // Through the base class too, as the task's catch sees it.
  const ImageryError& base = type_error;
  CHECK(std::string(PythonExceptionFor(base)) == "TypeError");
}
