#pragma once

#include <stdexcept>
#include <string>

namespace warmpool::imagery {

// The one exception type of the imagery library. `kind()` says what the caller can do about it;
// `exc_type()` is the Python exception class name a Celery client sees in a FAILURE result.
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

  // "ValueError", "FileNotFoundError", "PermissionError", "OSError" or "RuntimeError".
  virtual const char* exc_type() const {
    switch (kind_) {
      case Kind::kNotFound:
        return "FileNotFoundError";
      case Kind::kPermission:
        return "PermissionError";
      case Kind::kIo:
        return "OSError";
      case Kind::kDevice:
        return "RuntimeError";
      default:
        return "ValueError";
    }
  }

 private:
  Kind kind_;
};

}  // namespace warmpool::imagery
