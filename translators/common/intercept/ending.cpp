#include "vcx/intercept/ending.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "vcx/session_layout.h"

namespace vcx::intercept {
namespace {

// Everything the handlers use is prepared beforehand: they run in a dying
// process, possibly inside malloc.
char g_path[4096];
// Written first, then renamed to g_path: a rank killed while writing (mpiexec
// takes the others down at once) leaves no half-written ending behind.
char g_tmp_path[4096 + 8];
pid_t g_pid = -1;  // a forked child is not the rank
std::atomic<bool> g_recorded{false};
std::atomic<bool> g_finalized{false};

// Signals whose default action ends the process and that a program (or its
// library) may catch. SIGKILL and SIGSTOP cannot be caught.
constexpr int kWatchedSignals[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,  SIGABRT, SIGSYS, SIGTRAP,
                                   SIGTERM, SIGINT,  SIGHUP, SIGQUIT, SIGPIPE, SIGXCPU, SIGXFSZ,
                                   SIGALRM, SIGUSR1, SIGUSR2};
// Faults a handler cannot really recover from: recorded even when the
// handler we replaced (e.g. UCX's backtrace printer) runs next.
bool is_fault(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGSYS ||
         sig == SIGABRT;
}

struct sigaction g_previous[NSIG];

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

void on_signal(int sig, siginfo_t* info, void* context) {
  const struct sigaction& prev = g_previous[sig];
  const bool prev_is_function =
      (prev.sa_flags & SA_SIGINFO) ? prev.sa_sigaction != nullptr
                                   : prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN;
  // A handler of the program's may survive an asynchronous signal; then it
  // was not the end.
  const bool fatal = !prev_is_function || is_fault(sig);
  if (fatal) record_ending("signal", sig);
  if (prev_is_function) {
    if (prev.sa_flags & SA_SIGINFO)
      prev.sa_sigaction(sig, info, context);
    else
      prev.sa_handler(sig);
    return;
  }
  // The default action: put it back and let the signal take its course
  // (raised again it is delivered when this handler returns; a fault
  // happens again when the instruction is retried).
  ::sigaction(sig, &prev, nullptr);
  ::raise(sig);
}

void on_exit_hook(int status, void*) {
  if (!g_finalized.load()) record_ending("exit", status);
}

}  // namespace

void record_ending(const char* kind, int code, const char* call) {
  if (g_pid < 0 || ::getpid() != g_pid || g_recorded.exchange(true)) return;
  // "<kind> <code>\n" without stdio: this may run in a signal handler.
  char line[128];
  std::size_t n = 0;
  for (const char* k = kind; *k && n < 32; ++k) line[n++] = *k;
  line[n++] = ' ';
  unsigned value = static_cast<unsigned>(code);
  if (code < 0) {
    line[n++] = '-';
    value = 0u - value;
  }
  char digits[16];
  std::size_t d = 0;
  do {
    digits[d++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (d > 0) line[n++] = digits[--d];
  if (call && *call) {
    line[n++] = ' ';
    for (const char* c = call; *c && n < sizeof line - 1; ++c) line[n++] = *c;
  }
  line[n++] = '\n';
  const int fd = ::open(g_tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const bool whole = write_all(fd, line, n);
  ::close(fd);
  if (whole) ::rename(g_tmp_path, g_path);
}

void watch_ending(const char* session_dir, int world_rank) {
  std::snprintf(g_path, sizeof g_path, "%s/%s%d", session_dir, session::kEndingPrefix, world_rank);
  std::snprintf(g_tmp_path, sizeof g_tmp_path, "%s.tmp", g_path);
  g_pid = ::getpid();
  ::on_exit(&on_exit_hook, nullptr);
  for (int sig : kWatchedSignals) {
    struct sigaction prev {};
    if (::sigaction(sig, nullptr, &prev) != 0) continue;
    // An ignored signal kills nobody.
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_IGN) continue;
    g_previous[sig] = prev;
    struct sigaction mine {};
    mine.sa_sigaction = &on_signal;
    mine.sa_mask = prev.sa_mask;
    mine.sa_flags = SA_SIGINFO | (prev.sa_flags & (SA_ONSTACK | SA_RESTART | SA_NODEFER));
    ::sigaction(sig, &mine, nullptr);
  }
}

void ending_finalized() {
  g_finalized.store(true);
  // A signal recorded before did not end the rank: the program's handler
  // recovered from it (e.g. with siglongjmp).
  if (g_pid == ::getpid() && g_recorded.exchange(false)) ::unlink(g_path);
}

bool another_rank_ended(const char* session_dir) {
  if (!session_dir) return false;
  const std::string path = session::file(session_dir, session::kAppFailed);
  return ::access(path.c_str(), F_OK) == 0;
}

}  // namespace vcx::intercept
