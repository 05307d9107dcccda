// SelfJobs: this program run N times at once (the cuBLAS samples' --jobs), each copy
// with its own extra arguments and, optionally, its own file for stdout and stderr.
//
// Contract: run_self_jobs starts every job (execv of /proc/self/exe, else `self` on
// PATH), stops starting at the first fork failure (saying so on stderr), waits for all
// it started and returns their exit codes in order (1 for one that could not start or
// did not exit normally). A job's `log` names the file its stdout and stderr go to
// (created or truncated); empty: the parent's. stdout and stderr are flushed first.
// A SIGTERM or SIGINT that reaches the parent while it waits (a `timeout` around the
// whole run) is passed on to the jobs, and run_self_jobs returns once they have exited,
// so the caller still gets to use what they saved (the scan merges its slices' tables,
// which each slice rewrites at least every 30 s; session 15's device run 3 lost a
// whole table to a timeout before this). stopped_by_signal() then says which signal it
// was.
// The pids the handler signals sit in a fixed array written before the handler is
// installed and only read by it (no lock can be taken in a signal handler).
// Example: run_self_jobs(argv[0], "fixbits-cublas-match",
//                        {{.args = {"--slice=0/2"}}, {.args = {"--slice=1/2"}}}) -> {0, 0}.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <string>
#include <vector>

namespace fixbits::samples {

namespace self_jobs_detail {
inline constexpr int kMaxJobs = 256;
inline pid_t pids[kMaxJobs];                  // written before the handler is installed
inline volatile sig_atomic_t count = 0;       // how many of pids are valid
inline volatile sig_atomic_t stopped_by = 0;  // the signal that reached the parent, or 0
inline void forward(int sig) {
  stopped_by = sig;
  for (sig_atomic_t i = 0; i < count; ++i) kill(pids[i], SIGTERM);
}
}  // namespace self_jobs_detail

// The signal run_self_jobs passed on to its jobs (SIGTERM, SIGINT), or 0.
inline int stopped_by_signal() { return self_jobs_detail::stopped_by; }

struct SelfJob {
  std::vector<std::string> args;  // after argv[0]
  std::string log;                // stdout + stderr of the job; empty: the parent's
};

inline std::vector<int> run_self_jobs(const char* self, const char* tool,
                                      const std::vector<SelfJob>& jobs) {
  // The handler is in place before the first fork (a child's exec resets it), and
  // each pid is recorded before the count that lets the handler see it.
  namespace sj = self_jobs_detail;
  sj::count = 0;
  sj::stopped_by = 0;
  struct sigaction act = {}, old_term = {}, old_int = {};
  act.sa_handler = sj::forward;
  sigemptyset(&act.sa_mask);
  sigaction(SIGTERM, &act, &old_term);
  sigaction(SIGINT, &act, &old_int);
  std::vector<pid_t> pids;
  for (const SelfJob& job : jobs) {
    std::vector<std::string> argv_s = {self};
    argv_s.insert(argv_s.end(), job.args.begin(), job.args.end());
    std::vector<char*> argv_c;
    for (std::string& a : argv_s) argv_c.push_back(a.data());
    argv_c.push_back(nullptr);
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
      signal(SIGTERM, SIG_DFL);  // the parent's forwarding is not the child's business
      signal(SIGINT, SIG_DFL);
      if (!job.log.empty()) {
        const int fd = open(job.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
          dup2(fd, 1);
          dup2(fd, 2);
          close(fd);
        }
      }
      execv("/proc/self/exe", argv_c.data());
      execvp(self, argv_c.data());
      std::fprintf(stderr, "%s: --jobs: cannot start %s\n", tool, self);
      _exit(1);
    }
    if (pid < 0) {
      std::fprintf(stderr, "%s: --jobs: fork failed after %zu jobs\n", tool, pids.size());
      break;
    }
    pids.push_back(pid);
    if (pids.size() <= static_cast<size_t>(sj::kMaxJobs)) {
      sj::pids[pids.size() - 1] = pid;
      sj::count = static_cast<sig_atomic_t>(pids.size());
    }
  }
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    pid_t got = -1;
    do {
      got = waitpid(pid, &status, 0);
    } while (got < 0 && errno == EINTR);
    codes.push_back(got == pid && WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  }
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
  sj::count = 0;
  return codes;
}

}  // namespace fixbits::samples
