#include "launcher/process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace vcx::launcher {
namespace {

// The mask children start with while a SignalScope blocks signals in the
// launcher: they must see SIGINT and SIGTERM like any program.
bool g_scope_active = false;
sigset_t g_mask_for_children;

void on_sigchld(int) {}

}  // namespace

ExitStatus ExitStatus::from_wait_status(int status) {
  if (WIFSIGNALED(status)) return killed(WTERMSIG(status));
  if (WIFEXITED(status)) return exited(WEXITSTATUS(status));
  return exited(255);  // stopped/continued are never asked for
}

std::string signal_name(int sig) {
  if (const char* abbrev = sigabbrev_np(sig)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

std::string ExitStatus::describe() const {
  if (signaled) return "killed by signal " + std::to_string(code) + " (" + signal_name(code) + ")";
  return "exit status " + std::to_string(code);
}

Child::Child(Child&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      status_(std::exchange(other.status_, std::nullopt)),
      stdin_pipe_(std::exchange(other.stdin_pipe_, -1)) {}

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    reset();
    pid_ = std::exchange(other.pid_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
    stdin_pipe_ = std::exchange(other.stdin_pipe_, -1);
  }
  return *this;
}

Child::~Child() { reset(); }

void Child::reset() {
  if (running()) {
    signal_group(SIGKILL);
    wait();
  }
  close_stdin_pipe();
  pid_ = -1;
  status_.reset();
}

void Child::set_status(ExitStatus status) {
  status_ = status;
  close_stdin_pipe();
}

void Child::close_stdin_pipe() {
  if (stdin_pipe_ >= 0) ::close(stdin_pipe_);
  stdin_pipe_ = -1;
}

Child Child::spawn(const SpawnRequest& request) {
  if (request.argv.empty()) throw std::runtime_error("internal error: empty argument list");
  const std::string& file = request.file.empty() ? request.argv[0] : request.file;

  // Everything the child needs is prepared here: between fork and exec only
  // async-signal-safe calls are allowed.
  std::vector<char*> argv;
  for (const auto& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : request.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // The exec error travels back through a close-on-exec pipe: end of file
  // means the exec succeeded.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  // Close-on-exec on both ends: only the child's stdin (a dup) and the
  // parent's copy of the write end survive.
  int idle[2] = {-1, -1};
  if (request.stdin_mode == Stream::Idle && ::pipe2(idle, O_CLOEXEC) != 0) {
    const int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(err));
  }

  // All signals stay blocked across fork so that no handler runs in the
  // child, and so that the terminal hand-over below cannot stop us (SIGTTOU).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const sigset_t child_mask = g_scope_active ? g_mask_for_children : old;
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (request.terminal_fd >= 0) ::tcsetpgrp(request.terminal_fd, ::getpid());
    // If the launcher dies without cleaning up (SIGKILL), mpiexec still gets
    // told and takes its ranks down.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    if (request.stdin_mode == Stream::DevNull) {
      const int fd = ::open("/dev/null", O_RDONLY);
      if (fd >= 0 && fd != 0) {
        ::dup2(fd, 0);
        ::close(fd);
      }
    } else if (request.stdin_mode == Stream::Idle) {
      if (idle[0] == 0)
        ::fcntl(0, F_SETFD, 0);  // already in place: only keep it across exec
      else
        ::dup2(idle[0], 0);
    }
    if (request.stdout_mode == Stream::DevNull) {
      const int fd = ::open("/dev/null", O_WRONLY);
      if (fd >= 0 && fd != 1) {
        ::dup2(fd, 1);
        ::close(fd);
      }
    } else if (request.stdout_mode == Stream::ToStderr) {
      ::dup2(2, 1);
    }
    ::sigprocmask(SIG_SETMASK, &child_mask, nullptr);
    ::execve(file.c_str(), argv.data(), envp.data());
    const int err = errno;
    [[maybe_unused]] ssize_t n = ::write(report[1], &err, sizeof err);
    ::_exit(127);
  }
  const int fork_errno = errno;
  if (pid > 0) {
    // Both sides set the group (and the terminal): whichever runs first wins
    // the race, so the group exists before spawn returns.
    ::setpgid(pid, pid);
    if (request.terminal_fd >= 0) ::tcsetpgrp(request.terminal_fd, pid);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(report[1]);
  if (idle[0] >= 0) ::close(idle[0]);
  if (pid < 0) {
    ::close(report[0]);
    if (idle[1] >= 0) ::close(idle[1]);
    throw std::runtime_error("cannot start " + file + ": " + std::strerror(fork_errno));
  }

  Child child;
  child.pid_ = pid;
  child.stdin_pipe_ = idle[1];
  int exec_errno = 0;
  ssize_t got;
  do {
    got = ::read(report[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    reclaim_terminal(request.terminal_fd, pid);
    child.wait();
    child.pid_ = -1;
    child.status_.reset();
    throw std::runtime_error("cannot run " + file + ": " + std::strerror(exec_errno));
  }
  return child;
}

bool Child::poll() {
  if (pid_ <= 0) return false;
  if (status_) return true;
  int st = 0;
  const pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    set_status(ExitStatus::from_wait_status(st));
  } else if (r < 0 && errno == ECHILD) {
    set_status(ExitStatus::exited(255));  // reaped elsewhere: its status is lost
  }
  return status_.has_value();
}

bool Child::poll_stopped() {
  if (pid_ <= 0 || status_) return false;
  int st = 0;
  const pid_t r = ::waitpid(pid_, &st, WNOHANG | WUNTRACED);
  if (r == pid_ && WIFSTOPPED(st)) return true;
  if (r == pid_)
    set_status(ExitStatus::from_wait_status(st));
  else if (r < 0 && errno == ECHILD)
    set_status(ExitStatus::exited(255));
  return false;
}

void Child::wait() {
  if (pid_ <= 0 || status_) return;
  int st = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &st, 0);
  } while (r < 0 && errno == EINTR);
  set_status(r == pid_ ? ExitStatus::from_wait_status(st) : ExitStatus::exited(255));
}

void Child::signal_group(int sig) const {
  if (pid_ > 0) ::kill(-pid_, sig);
}

bool Child::group_alive() const {
  if (pid_ <= 0) return false;
  return ::kill(-pid_, 0) == 0 || errno == EPERM;
}

SignalScope::SignalScope() {
  sigemptyset(&waited_);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1}) sigaddset(&waited_, sig);
  // A handler (rather than the default "ignore") guarantees that SIGCHLD is
  // kept pending while blocked.
  struct sigaction sa {};
  sa.sa_handler = on_sigchld;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // stops too: Ctrl-Z on the application job must be seen
  ::sigaction(SIGCHLD, &sa, &old_chld_action_);
  pthread_sigmask(SIG_BLOCK, &waited_, &old_mask_);
  g_mask_for_children = old_mask_;
  g_scope_active = true;
}

SignalScope::~SignalScope() {
  // Drop what is still pending so that unblocking cannot kill the process
  // after the children have been dealt with.
  timespec zero{0, 0};
  while (::sigtimedwait(&waited_, nullptr, &zero) > 0) {
  }
  g_scope_active = false;
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  ::sigaction(SIGCHLD, &old_chld_action_, nullptr);
}

int SignalScope::wait(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0) timeout = std::chrono::milliseconds(0);
  timespec ts{static_cast<time_t>(timeout.count() / 1000),
              static_cast<long>((timeout.count() % 1000) * 1'000'000)};
  const int sig = ::sigtimedwait(&waited_, nullptr, &ts);
  return sig > 0 ? sig : 0;
}

bool SignalScope::is_termination(int sig) {
  return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

int foreground_terminal() {
  if (!::isatty(STDIN_FILENO)) return -1;
  const pid_t fg = ::tcgetpgrp(STDIN_FILENO);
  return fg >= 0 && fg == ::getpgrp() ? STDIN_FILENO : -1;
}

void give_terminal(int fd, pid_t pgid) {
  if (fd < 0) return;
  // From a background group tcsetpgrp raises SIGTTOU unless it is blocked.
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &ttou, &old);
  ::tcsetpgrp(fd, pgid);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void reclaim_terminal(int fd, pid_t from_pgid) {
  if (fd < 0 || ::tcgetpgrp(fd) != from_pgid) return;
  give_terminal(fd, ::getpgrp());
}

}  // namespace vcx::launcher
