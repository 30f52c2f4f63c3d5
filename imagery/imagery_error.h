#pragma once

#include <stdexcept>
#include <string>

namespace warmpool::imagery {

// The one exception type of the imagery library. `kind()` says what the caller can do about it
// (the worker maps it to the Python exception a Celery client sees: worker/tasks/
// imagery_exceptions.h).
class ImageryError : public std::runtime_error {
 public:
  enum class Kind {
    kInvalidArgument,  // a bad option or band index: ValueError
    kNotFound,         // the raster does not exist: FileNotFoundError
    kPermission,       // the path is outside the data root: PermissionError
    kCorrupt,          // the file exists but GDAL cannot read it: ValueError
    kMismatch,         // before/after differ in size, CRS or band count: ValueError
    kUnsupported,      // a data type or layout the pipeline does not handle: ValueError
    kIo,               // writing an output failed: OSError
    kDevice,           // CUDA requested but unavailable or failed: RuntimeError
  };

  ImageryError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ~ImageryError() override = default;

  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace warmpool::imagery
