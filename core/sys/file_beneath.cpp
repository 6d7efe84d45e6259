#include "core/sys/file_beneath.hpp"

#include "core/base/fd.hpp"
#include "core/sys/eintr.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace nb {

namespace {

std::string type_words(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  return "not a regular file";
}

// RESOLVE_BENEATH refuses any path that resolves outside `dir`. Without openat2 (before 5.6, or seccomp),
// the resolved path is compared with the folder's.
int open_beneath(int dir, const fs::path& folder, const fs::path& relative, int flags) {
  if (!(flags & O_PATH)) flags |= O_NOCTTY;  // openat2 takes no other flag beside O_PATH
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const long fd = retry_eintr([&] { return ::syscall(SYS_openat2, dir, relative.c_str(), &how, sizeof how); });
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);
  std::error_code ec;
  const fs::path base = fs::canonical(folder, ec);
  const fs::path target = ec ? fs::path() : fs::weakly_canonical(folder / relative, ec);
  if (ec) return errno = ENOENT, -1;
  const auto [end, at] = std::mismatch(base.begin(), base.end(), target.begin(), target.end());
  if (end != base.end() || at == target.end()) return errno = EXDEV, -1;
  return retry_eintr([&] { return ::open(target.c_str(), flags | O_CLOEXEC | O_NOFOLLOW); });
}

std::string read_all(int fd, const fs::path& path, std::size_t max_bytes) {
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = retry_eintr([&] { return ::read(fd, buffer, sizeof buffer); });
    if (n < 0) throw std::runtime_error(fmt::format("{}: cannot read it: {}", path.string(), std::strerror(errno)));
    if (n == 0) return text;
    // It grew since stat: the cap holds for what is read.
    if (text.size() + static_cast<std::size_t>(n) > max_bytes)
      throw std::runtime_error(fmt::format("{}: more than {}, the most such a file may hold: not read", path.string(),
                                           byte_size_words(max_bytes)));
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string byte_size_words(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

std::optional<std::string> read_file_beneath(const fs::path& folder, const fs::path& relative, std::size_t max_bytes) {
  const fs::path path = folder / relative;
  auto fail = [&](const std::string& why) { return std::runtime_error(fmt::format("{}: {}", path.string(), why)); };
  const fd_handle dir(retry_eintr([&] { return ::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC); }));
  if (!dir && (errno == ENOENT || errno == ENOTDIR)) return std::nullopt;
  if (!dir)
    throw std::runtime_error(fmt::format("{}: cannot open the folder: {}", folder.string(), std::strerror(errno)));
  // O_PATH first: opening a device may have effects of its own.
  const fd_handle where(open_beneath(dir.get(), folder, relative, O_PATH));
  if (!where && (errno == ENOENT || errno == ENOTDIR)) return std::nullopt;
  if (!where && errno == EXDEV) throw fail(fmt::format("leads out of {} (a symlink?): not read", folder.string()));
  if (!where) throw fail(fmt::format("cannot open it: {}", std::strerror(errno)));
  struct stat before {};
  if (::fstat(where.get(), &before) != 0) throw fail(fmt::format("cannot stat it: {}", std::strerror(errno)));
  if (!S_ISREG(before.st_mode)) throw fail(fmt::format("{}, not a regular file: not read", type_words(before.st_mode)));
  if (static_cast<std::uintmax_t>(before.st_size) > max_bytes)
    throw fail(fmt::format("{} bytes, more than {}, the most such a file may hold: not read", before.st_size,
                           byte_size_words(max_bytes)));
  // O_NONBLOCK: should it now be a FIFO, the open does not wait for a writer.
  const fd_handle file(open_beneath(dir.get(), folder, relative, O_RDONLY | O_NONBLOCK));
  if (!file) throw fail(fmt::format("cannot open it: {}", std::strerror(errno)));
  struct stat now {};
  if (::fstat(file.get(), &now) != 0 || now.st_dev != before.st_dev || now.st_ino != before.st_ino)
    throw fail("changed while it was opened: not read");
  return read_all(file.get(), path, max_bytes);
}

}  // namespace nb
