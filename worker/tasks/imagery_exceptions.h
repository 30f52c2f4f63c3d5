#pragma once

#include "imagery/imagery_error.h"

namespace warmpool::worker {

// The Python exception class (module "builtins") a Celery client sees in the FAILURE result of
// an imagery task that failed with an ImageryError of `kind`: kNotFound FileNotFoundError,
// kPermission PermissionError, kIo OSError, kDevice RuntimeError, the rest ValueError.
const char* PythonExceptionFor(imagery::ImageryError::Kind kind);

// The same for `error`; a TaskArgumentError (worker/tasks/change_detection_task.h) says itself
// whether it is a TypeError or a ValueError.
const char* PythonExceptionFor(const imagery::ImageryError& error);

}  // namespace warmpool::worker
