// SelfJobs: this program run N times at once (the cuBLAS samples' --jobs), each copy
// with its own extra arguments and, optionally, its own file for stdout and stderr.
//
// Contract: run_self_jobs starts every job (execv of /proc/self/exe, else `self` on
// PATH), stops starting at the first fork failure (saying so on stderr), waits for all
// it started and returns their exit codes in order (1 for one that could not start or
// did not exit normally). A job's `log` names the file its stdout and stderr go to
// (created or truncated); empty: the parent's. stdout and stderr are flushed first.
// Example: run_self_jobs(argv[0], "fixbits-cublas-match",
//                        {{.args = {"--slice=0/2"}}, {.args = {"--slice=1/2"}}}) -> {0, 0}.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace fixbits::samples {

struct SelfJob {
  std::vector<std::string> args;  // after argv[0]
  std::string log;                // stdout + stderr of the job; empty: the parent's
};

inline std::vector<int> run_self_jobs(const char* self, const char* tool,
                                      const std::vector<SelfJob>& jobs) {
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
  }
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  }
  return codes;
}

}  // namespace fixbits::samples
