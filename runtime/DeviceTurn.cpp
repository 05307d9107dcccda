// DeviceTurn: turns at one GPU between processes, as an exclusive flock(2) on a shared
// lock file (contract in DeviceTurn.h).
#include "runtime/DeviceTurn.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace fixbits::runtime {

namespace {
// flock(fd, op), retried when a signal interrupts it; true when the lock was taken.
bool lock(int fd, int op) {
  for (;;) {
    if (flock(fd, op) == 0) return true;
    if (errno != EINTR) return false;
  }
}
}  // namespace

DeviceTurn::Held& DeviceTurn::Held::operator=(Held&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) flock(fd_, LOCK_UN);
    fd_ = o.fd_;
    held_ = o.held_;
    o.fd_ = -1;
    o.held_ = false;
  }
  return *this;
}

DeviceTurn::Held::~Held() {
  if (fd_ >= 0) flock(fd_, LOCK_UN);
}

absl::StatusOr<DeviceTurn> DeviceTurn::open(const std::string& path) {
  if (path.empty()) return DeviceTurn();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrFormat(
        "DeviceTurn: cannot open the lock file %s: %s", path, std::strerror(errno)));
  }
  return DeviceTurn(fd);
}

DeviceTurn& DeviceTurn::operator=(DeviceTurn&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

DeviceTurn::~DeviceTurn() {
  if (fd_ >= 0) close(fd_);
}

DeviceTurn::Held DeviceTurn::hold() const {
  if (fd_ < 0) return Held(-1, true);
  // A lock that cannot be taken (not EINTR: a file system without flock) leaves the
  // turn free rather than stopping the caller's work: sharing is then as without it.
  return lock(fd_, LOCK_EX) ? Held(fd_, true) : Held(-1, true);
}

DeviceTurn::Held DeviceTurn::try_hold() const {
  if (fd_ < 0) return Held(-1, true);
  return lock(fd_, LOCK_EX | LOCK_NB) ? Held(fd_, true) : Held(-1, false);
}

}  // namespace fixbits::runtime
