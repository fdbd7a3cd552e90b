// Child processes of the launcher: each job (tool, application) runs in a
// process group of its own, so that a signal reaches the job's mpiexec (and
// whatever else stays in its group; hydra passes it on to its proxies, which
// run in sessions of their own) without hitting the launcher or the other job.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace vcx::launcher {

// A decoded wait status.
struct ExitStatus {
  bool signaled = false;
  int code = 0;  // the exit code, or the signal number when signaled

  static ExitStatus from_wait_status(int status);
  static ExitStatus exited(int code) { return {false, code}; }
  static ExitStatus killed(int sig) { return {true, sig}; }

  bool success() const { return !signaled && code == 0; }
  // What a shell reports: the exit code, or 128 + the signal.
  int shell_code() const { return signaled ? 128 + code : code; }
  // "exit status 3", "killed by signal 9 (SIGKILL)"
  std::string describe() const;
};

// "SIGINT" for 2; "signal 99" when the number has no name.
std::string signal_name(int sig);

enum class Stream {
  Inherit,   // the launcher's own stream
  DevNull,   // /dev/null
  ToStderr,  // the launcher's stderr (stdout only: keeps tool chatter out of the program's output)
  // stdin only: an empty pipe whose write end only the parent holds, until
  // the child is reaped. Nothing to read and no end of file, like a terminal
  // nobody types into. MPICH's mpiexec forwards a readable stdin (end of file
  // included) to its first proxy whenever it gets to it; when a short job's
  // proxy has already exited by then, that write kills mpiexec with SIGPIPE.
  Idle,
};

struct SpawnRequest {
  std::string file;               // executed as is (no PATH search)
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // the complete environment, "NAME=value"
  Stream stdin_mode = Stream::Inherit;
  Stream stdout_mode = Stream::Inherit;
  // The terminal (a file descriptor) whose foreground group the new group
  // becomes, or -1. mpiexec forwards stdin only while it is in the foreground.
  int terminal_fd = -1;
};

// One child process leading its own process group.
class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  // A child still running here is killed with its group and reaped: an
  // early return must not leave a job behind.
  ~Child();

  // Throws std::runtime_error naming the file and the reason when the
  // program cannot be started.
  static Child spawn(const SpawnRequest& request);

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }
  bool running() const { return pid_ > 0 && !status_; }
  const std::optional<ExitStatus>& status() const { return status_; }

  // Reaps the child if it has ended, without blocking; true once it has ended.
  bool poll();
  // Like poll(), but also reports (once) that the child was stopped
  // (Ctrl-Z): true only for a stop.
  bool poll_stopped();
  // Blocks until the child has ended.
  void wait();
  // Sends `sig` to the child's process group. After the leader ended, the
  // group's remaining members (if any) still receive it.
  void signal_group(int sig) const;
  // True while some process of the group still exists.
  bool group_alive() const;

 private:
  void reset();

  // Marks the child as ended; its Stream::Idle stdin is not needed any more.
  void set_status(ExitStatus status);
  void close_stdin_pipe();

  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
  int stdin_pipe_ = -1;  // the write end of a Stream::Idle stdin
};

// Blocks SIGCHLD and the signals the launcher forwards (SIGINT, SIGTERM,
// SIGHUP) so that they are taken one at a time by wait(), never by a handler
// in the middle of the bookkeeping; restores mask and handlers on destruction.
// Children started meanwhile get the mask from before.
class SignalScope {
 public:
  SignalScope();
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  // Sleeps until one of the signals arrives or `timeout` passes: the signal
  // number, or 0 on timeout. A child's end shows up as SIGCHLD.
  int wait(std::chrono::milliseconds timeout);

  static bool is_termination(int sig);

 private:
  sigset_t waited_;    // the signals wait() takes
  sigset_t old_mask_;  // the mask before the scope
  struct sigaction old_chld_action_;
};

// The terminal whose foreground the launcher may hand to the application job:
// stdin when it is a terminal and the launcher's group owns it, else -1.
int foreground_terminal();
// Makes `pgid` the terminal's foreground group (nothing when fd is -1).
void give_terminal(int fd, pid_t pgid);
// Takes the terminal back for the launcher's own group, but only from
// `from_pgid`: after `bg` the shell owns it and must keep it.
void reclaim_terminal(int fd, pid_t from_pgid);

}  // namespace vcx::launcher
