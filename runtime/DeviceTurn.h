// DeviceTurn: one GPU shared by several processes of one program (the cuBLAS scan's
// --jobs slices), used in turns.
//
// Why: processes that each hold a CUDA context and keep work on one GPU at the same
// time are time-sliced by the driver, so a small synchronous call waits for the other
// contexts' slices. Session 14's device run 4 (8 scan slices) measured about 2 ms per
// black-box call of a split gemv probe; session 15's run 1, one process alone, 0.04 ms
// for the same kind of call. A process that holds the turn while it has work on the
// device leaves the GPU one context at a time.
//
// Contract:
//   * open(path) opens (creating, mode 0644) the lock file at `path`; every process that
//     opens the same path takes turns with the others. An empty path gives a turn that
//     is always free (one process: nothing to share). A file that cannot be opened is an
//     error naming the path.
//   * hold() blocks until this process has the turn and returns a guard that gives it
//     back when destroyed; try_hold() returns an empty guard instead of blocking when
//     another process has it. The turn is an exclusive flock(2) on this object's own
//     open file: it is released if the process dies, and one DeviceTurn is not
//     re-entrant (a second hold() on it while the first guard lives does not block, as
//     flock lets the open file that holds it lock again; use one guard per call).
//   * Threads of one process share a DeviceTurn's file: the turn orders processes,
//     not the threads of one.
// Example: DeviceTurn t = *DeviceTurn::open("/tmp/scan.turn");
//          { DeviceTurn::Held h = t.hold(); box.run_sparse(p); }
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace fixbits::runtime {

class DeviceTurn {
 public:
  class Held {
   public:
    Held() = default;
    Held(Held&& o) noexcept : fd_(o.fd_), held_(o.held_) {
      o.fd_ = -1;
      o.held_ = false;
    }
    Held& operator=(Held&& o) noexcept;
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held();
    // Whether this guard holds a turn (an always-free turn's guard holds one too).
    bool held() const { return held_; }

   private:
    friend class DeviceTurn;
    Held(int fd, bool held) : fd_(fd), held_(held) {}
    int fd_ = -1;  // the locked file; -1: nothing to unlock
    bool held_ = false;
  };

  static absl::StatusOr<DeviceTurn> open(const std::string& path);
  DeviceTurn() = default;  // always free
  DeviceTurn(DeviceTurn&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DeviceTurn& operator=(DeviceTurn&& o) noexcept;
  DeviceTurn(const DeviceTurn&) = delete;
  DeviceTurn& operator=(const DeviceTurn&) = delete;
  ~DeviceTurn();

  Held hold() const;
  Held try_hold() const;

 private:
  explicit DeviceTurn(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace fixbits::runtime
