#include "imagery/data_root.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>

#include "imagery/imagery_error.h"
#include "imagery/path_policy.h"

namespace warmpool::imagery {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void Fail(ImageryError::Kind kind, const std::string& message) {
  throw ImageryError(kind, message);
}

std::optional<std::string> RealPath(const std::string& path, int* error) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) == nullptr) {
    *error = errno;
    return std::nullopt;
  }
  return std::string(buf);
}

// The path the kernel has for an open descriptor: what was really opened, after every rename.
std::string OpenedPath(int fd) {
  char buf[PATH_MAX];
  const ssize_t n = readlink(FdPath(fd).c_str(), buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string RealRoot(const std::string& root, const char* what) {
  int error = 0;
  const std::optional<std::string> real = RealPath(root, &error);
  if (!real) {
    Fail(ImageryError::Kind::kPermission,
         std::string(what) + " '" + root + "' cannot be resolved: " + std::strerror(error));
  }
  return *real;
}

const char* FileTypeName(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// True when `real` (a resolved path) is `root` or below it.
bool Inside(const std::string& real, const std::string& root) {
  return RelativeInside(real, root).has_value();
}

std::string RandomSuffix() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s(10, 'x');
  for (char& c : s) {
    c = kChars[rng() % (sizeof(kChars) - 1)];
  }
  return s;
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

int UniqueFd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

std::string FdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

InputFile OpenInputFile(const std::string& path, const PathPolicy& policy) {
  if (path.empty()) {
    Fail(ImageryError::Kind::kInvalidArgument, "raster path is empty");
  }
  if (IsGdalVirtualPath(path)) {
    CheckRemotePath(path, policy.remote_prefixes);
    return InputFile{path, UniqueFd()};
  }
  std::string root, real_root;
  fs::path candidate(path);
  if (!policy.data_root.empty()) {
    root = fs::absolute(policy.data_root).lexically_normal().string();
    real_root = RealRoot(policy.data_root, "data root");
    if (candidate.is_relative()) {
      candidate = fs::path(real_root) / candidate;
    }
    // Lexically first: "/etc/passwd" or "../x" is refused without touching the file system.
    if (!RelativeInside(candidate.string(), root) &&
        !RelativeInside(candidate.string(), real_root)) {
      Fail(ImageryError::Kind::kPermission,
           "path '" + path + "' is outside the data root '" + real_root + "'");
    }
  }
  int error = 0;
  const std::optional<std::string> real = RealPath(fs::absolute(candidate).string(), &error);
  if (!real) {
    if (error == ENOENT || error == ENOTDIR) {
      Fail(ImageryError::Kind::kNotFound, "raster '" + path + "' does not exist");
    }
    Fail(ImageryError::Kind::kPermission,
         "raster '" + path + "' cannot be resolved: " + std::strerror(error));
  }
  if (!real_root.empty() && !Inside(*real, real_root)) {
    Fail(ImageryError::Kind::kPermission, "path '" + path + "' resolves to '" + *real +
                                              "', outside the data root '" + real_root + "'");
  }
  // Devices and sockets are not even opened (opening some has side effects); fstat below
  // catches a swap after this check.
  struct stat st {};
  if (stat(real->c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    Fail(ImageryError::Kind::kInvalidArgument,
         "raster '" + path + "' is " + FileTypeName(st.st_mode) + "; only regular files are read");
  }
  // O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: the resolved name was no
  // symlink a moment ago and must not have become one.
  UniqueFd fd(open(real->c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int e = errno;
    if (e == ENOENT) {
      Fail(ImageryError::Kind::kNotFound, "raster '" + path + "' does not exist");
    }
    Fail(e == EACCES || e == ELOOP || e == EPERM ? ImageryError::Kind::kPermission
                                                 : ImageryError::Kind::kIo,
         "cannot open raster '" + path + "': " + std::strerror(e));
  }
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    Fail(ImageryError::Kind::kInvalidArgument,
         "raster '" + path + "' is " + FileTypeName(st.st_mode) + "; only regular files are read");
  }
  if (!real_root.empty() && !Inside(OpenedPath(fd.get()), real_root)) {
    Fail(ImageryError::Kind::kPermission,
         "raster '" + path + "' moved outside the data root while it was opened");
  }
  fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return InputFile{*real, std::move(fd)};
}

std::string ReadPrefix(int fd, size_t max_bytes) {
  std::string out(max_bytes, '\0');
  size_t got = 0;
  while (got < max_bytes) {
    const ssize_t n = pread(fd, out.data() + got, max_bytes - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

OutputDir OutputDir::Open(const std::string& requested, const std::vector<std::string>& roots) {
  if (requested.empty()) {
    Fail(ImageryError::Kind::kInvalidArgument, "output_dir is empty");
  }
  if (roots.empty()) {
    std::error_code ec;
    fs::create_directories(requested, ec);
    UniqueFd fd(open(requested.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) {
      Fail(ImageryError::Kind::kIo, "cannot create output_dir '" + requested +
                                        "': " + (ec ? ec.message() : std::strerror(errno)));
    }
    return OutputDir(fs::absolute(requested).lexically_normal().string(), std::move(fd));
  }
  std::string described;
  for (const std::string& configured : roots) {
    const std::string root = fs::absolute(configured).lexically_normal().string();
    int error = 0;
    const std::optional<std::string> real_root = RealPath(root, &error);
    described += (described.empty() ? "'" : " or '") + root + "'";
    if (!real_root) {
      continue;
    }
    const fs::path candidate =
        fs::path(requested).is_relative() ? fs::path(*real_root) / requested : fs::path(requested);
    std::optional<std::string> rel = RelativeInside(candidate.string(), root);
    if (!rel) rel = RelativeInside(candidate.string(), *real_root);
    if (!rel) {
      continue;
    }
    UniqueFd dir(open(real_root->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) {
      Fail(ImageryError::Kind::kIo,
           "cannot open output root '" + *real_root + "': " + std::strerror(errno));
    }
    for (const fs::path& component : fs::path(*rel)) {
      const std::string name = component.string();
      if (name.empty() || name == ".") continue;
      const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
      int next = openat(dir.get(), name.c_str(), flags);
      if (next < 0 && errno == ENOENT) {
        if (mkdirat(dir.get(), name.c_str(), 0777) != 0 && errno != EEXIST) {
          Fail(ImageryError::Kind::kIo,
               "cannot create output_dir '" + requested + "': " + std::strerror(errno));
        }
        next = openat(dir.get(), name.c_str(), flags);
      }
      if (next < 0) {
        const int e = errno;
        if (e == ELOOP || e == ENOTDIR) {
          Fail(ImageryError::Kind::kPermission,
               "output_dir '" + requested + "': '" + name +
                   "' is a symlink or not a directory; output directories must be real "
                   "directories inside the root");
        }
        Fail(ImageryError::Kind::kIo,
             "cannot open output_dir '" + requested + "': " + std::strerror(e));
      }
      dir = UniqueFd(next);
    }
    if (!Inside(OpenedPath(dir.get()), *real_root)) {
      Fail(ImageryError::Kind::kPermission,
           "output_dir '" + requested + "' moved outside the root while it was opened");
    }
    return OutputDir((fs::path(*real_root) / *rel).lexically_normal().string(), std::move(dir));
  }
  Fail(ImageryError::Kind::kPermission,
       "output_dir '" + requested + "' is outside the data root (allowed: " + described + ")");
}

OutputFile::OutputFile(const OutputDir& dir, const std::string& name)
    : dir_fd_(dir.fd()), name_(name), path_((fs::path(dir.path()) / name).string()) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    Fail(ImageryError::Kind::kInvalidArgument, "output name '" + name + "' is not a file name");
  }
  for (int attempt = 0; attempt < 16 && fd_.get() < 0; ++attempt) {
    temp_name_ = "." + name + "." + RandomSuffix();
    fd_ = UniqueFd(openat(dir_fd_, temp_name_.c_str(),
                          O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (fd_.get() < 0 && errno != EEXIST) break;
  }
  if (fd_.get() < 0) {
    Fail(ImageryError::Kind::kIo, "cannot create '" + path_ + "': " + std::strerror(errno));
  }
}

OutputFile::~OutputFile() {
  if (!committed_ && fd_.get() >= 0) {
    unlinkat(dir_fd_, temp_name_.c_str(), 0);
  }
}

void OutputFile::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd_.get(), bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Fail(ImageryError::Kind::kIo, "cannot write '" + path_ + "': " + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void OutputFile::Commit() {
  // The temporary name must still be our file: renaming whatever replaced it would publish it.
  struct stat ours {
  }, named{};
  if (fstat(fd_.get(), &ours) != 0 ||
      fstatat(dir_fd_, temp_name_.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0 ||
      ours.st_ino != named.st_ino || ours.st_dev != named.st_dev) {
    Fail(ImageryError::Kind::kIo, "cannot finish '" + path_ + "': its temporary file was replaced");
  }
  if (renameat(dir_fd_, temp_name_.c_str(), dir_fd_, name_.c_str()) != 0) {
    Fail(ImageryError::Kind::kIo, "cannot write '" + path_ + "': " + std::strerror(errno));
  }
  committed_ = true;
}

}  // namespace warmpool::imagery
