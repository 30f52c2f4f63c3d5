#pragma once

// Confines an imagery task's file access to its roots, on the file system itself: inputs are
// resolved (symlinks followed only while they stay inside the data root), opened O_NOFOLLOW |
// O_NONBLOCK and must be regular files; output directories are walked one component at a time
// with openat(O_NOFOLLOW), so no symlink below the root is followed; outputs are fresh files
// created O_EXCL | O_NOFOLLOW in that directory and rename()d over their final names, which
// replaces a planted symlink instead of writing through it. GDAL is given "/proc/self/fd/N"
// paths, so it reads and writes exactly the files checked here, whatever is renamed meanwhile.

#include <string>
#include <string_view>
#include <vector>

namespace warmpool::imagery {

// An owned file descriptor (-1 = none). Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  int release();

 private:
  int fd_ = -1;
};

// The path GDAL or OpenCV should use for an open descriptor: "/proc/self/fd/N".
std::string FdPath(int fd);

// Where a task may read from.
struct PathPolicy {
  // Local inputs must resolve inside it. Empty: local paths are not confined (library and test
  // use only; the worker always sets one). Inputs must still be regular files.
  std::string data_root;
  // GDAL network or /vsi prefixes allowed (ParseRemotePrefixes); empty = none.
  std::vector<std::string> remote_prefixes;
};

// An input raster: a local regular file opened for reading, or a /vsi path that passed the
// allow-list (fd -1).
struct InputFile {
  std::string path;  // the resolved real path (local) or the /vsi path as given
  UniqueFd fd;
  bool remote() const { return fd.get() < 0; }
  std::string GdalPath() const { return remote() ? path : FdPath(fd.get()); }
};

// Opens `path` (relative paths are below policy.data_root) for reading. Throws ImageryError:
// kInvalidArgument for an empty path or one that is not a regular file (a FIFO, device, socket
// or directory; checked without blocking); kPermission when it is outside the data root, lexically
// or through a symlink, or a /vsi path the policy does not allow (the message names the flag);
// kNotFound when it does not exist.
InputFile OpenInputFile(const std::string& path, const PathPolicy& policy);

// Reads at most `max_bytes` from the start of `fd` (pread; the offset is unchanged).
std::string ReadPrefix(int fd, size_t max_bytes);

// A verified output directory, held open so later writes go where the checks looked.
class OutputDir {
 public:
  // Opens (creating missing components, mode 0777 & ~umask) `requested` inside one of `roots`
  // (relative paths are below roots[0]). Every component below the root must be a real
  // directory: a symlink, even one pointing inside, is refused. Empty `roots`: no confinement
  // (library and test use). Throws ImageryError: kPermission when outside every root or a
  // component is a symlink or not a directory; kIo when it cannot be created.
  static OutputDir Open(const std::string& requested, const std::vector<std::string>& roots);

  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }

 private:
  OutputDir(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  std::string path_;
  UniqueFd fd_;
};

// One output file, written to a fresh temporary file in its directory and renamed over `name`
// by Commit(); removed when destroyed uncommitted (a failed task leaves no partial product).
class OutputFile {
 public:
  // Creates ".<name>.<random>" with O_CREAT | O_EXCL | O_NOFOLLOW. `name` must be one plain
  // component. Throws ImageryError(kIo).
  OutputFile(const OutputDir& dir, const std::string& name);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // The final path, for results and messages.
  const std::string& path() const { return path_; }
  // Where a library that opens files itself (GDAL) writes: the temporary file's descriptor.
  std::string WritePath() const { return FdPath(fd_.get()); }
  // Appends `bytes`. Throws ImageryError(kIo).
  void Write(std::string_view bytes);
  // Renames the temporary file over the final name (a planted symlink or file is replaced, a
  // directory is an error). Throws ImageryError(kIo).
  void Commit();

 private:
  int dir_fd_;
  std::string name_;
  std::string temp_name_;
  std::string path_;
  UniqueFd fd_;
  bool committed_ = false;
};

}  // namespace warmpool::imagery
