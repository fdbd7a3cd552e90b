// Starting and supervising the launcher's children: own process groups,
// exit codes, signals, and waiting with timeouts.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "launcher/process.h"
#include "support/temp_dir.h"

using namespace vcx::launcher;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using vcx::test::TempDir;

SpawnRequest sh(const std::string& script) {
  SpawnRequest r;
  r.file = "/bin/sh";
  r.argv = {"sh", "-c", script};
  r.env = {"PATH=/usr/bin:/bin"};
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Waits up to `limit` for `path` to have content.
bool wait_for_file(const std::string& path, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(path) && fs::file_size(path) > 0) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// Dead, or a zombie waiting for init to reap it (it is no longer ours to reap).
bool process_gone(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z')
      return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

TEST_CASE("launcher process: exit codes", "[launcher]") {
  for (int code : {0, 1, 3, 127, 255}) {
    Child c = Child::spawn(sh("exit " + std::to_string(code)));
    c.wait();
    REQUIRE(c.status());
    CHECK_FALSE(c.status()->signaled);
    CHECK(c.status()->code == code);
    CHECK(c.status()->shell_code() == code);
    CHECK(c.status()->success() == (code == 0));
    CHECK_FALSE(c.running());
  }
  CHECK(ExitStatus::exited(3).describe() == "exit status 3");
}

TEST_CASE("launcher process: death by signal", "[launcher]") {
  Child c = Child::spawn(sh("kill -TERM $$"));
  c.wait();
  REQUIRE(c.status());
  CHECK(c.status()->signaled);
  CHECK(c.status()->code == SIGTERM);
  CHECK(c.status()->shell_code() == 128 + SIGTERM);
  CHECK(c.status()->describe() == "killed by signal 15 (SIGTERM)");
  CHECK(signal_name(SIGKILL) == "SIGKILL");
}

TEST_CASE("launcher process: a program that cannot run", "[launcher]") {
  SpawnRequest r;
  r.file = "/nonexistent/program";
  r.argv = {"program"};
  CHECK_THROWS_WITH(Child::spawn(r), Catch::Contains("/nonexistent/program") &&
                                         Catch::Contains("No such file or directory"));
  TempDir t;
  const std::string plain = t.path + "/plain";
  std::ofstream(plain) << "not a program";
  ::chmod(plain.c_str(), 0644);
  r.file = plain;
  CHECK_THROWS_WITH(Child::spawn(r), Catch::Contains("Permission denied"));
}

TEST_CASE("launcher process: own process group, signalled as a whole", "[launcher]") {
  TempDir t;
  const std::string pidfile = t.path + "/grandchild";
  // The grandchild must die with the group although only the group is told.
  Child c = Child::spawn(sh("sleep 30 & echo $! > " + pidfile + "; wait"));
  CHECK(::getpgid(c.pid()) == c.pid());
  CHECK(c.group_alive());
  REQUIRE(wait_for_file(pidfile, 5s));
  const pid_t grandchild = std::stoi(slurp(pidfile));
  CHECK(::getpgid(grandchild) == c.pid());
  c.signal_group(SIGTERM);
  c.wait();
  CHECK(c.status()->signaled);
  CHECK(process_gone(grandchild, 5s));
}

TEST_CASE("launcher process: a running child is killed when dropped", "[launcher]") {
  pid_t pid;
  {
    Child c = Child::spawn(sh("exec sleep 30"));
    pid = c.pid();
    CHECK(c.running());
    CHECK_FALSE(c.poll());
  }
  // Reaped by the destructor, so the pid no longer exists at all.
  CHECK(::kill(pid, 0) != 0);
  CHECK(errno == ESRCH);
}

TEST_CASE("launcher process: environment and standard streams", "[launcher]") {
  TempDir t;
  const std::string out = t.path + "/out";
  SpawnRequest r = sh("read line; echo \"[$line][$FOO][${HOME:-unset}]\" > " + out);
  r.env.push_back("FOO=bar baz");
  r.stdin_mode = Stream::DevNull;  // read sees end of file at once
  Child c = Child::spawn(r);
  c.wait();
  CHECK(c.status()->success());
  CHECK(slurp(out) == "[][bar baz][unset]\n");

  // stdout can be sent to stderr (tool chatter must not mix with the program's output).
  const std::string err = t.path + "/err";
  const int saved = ::dup(2);
  const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  ::dup2(fd, 2);
  ::close(fd);
  SpawnRequest e = sh("echo to-stdout");
  e.stdout_mode = Stream::ToStderr;
  Child ce = Child::spawn(e);
  ce.wait();
  ::dup2(saved, 2);
  ::close(saved);
  CHECK(slurp(err) == "to-stdout\n");
}

TEST_CASE("launcher process: an idle stdin", "[launcher]") {
  TempDir t;
  const auto open_fds = [] {
    return std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator{});
  };
  const auto fds_before = open_fds();

  // Nothing to read and no end of file while the child runs: cat is still
  // blocked when timeout stops it (124).
  const std::string out = t.path + "/out";
  SpawnRequest r = sh("[ -p /dev/stdin ] && echo pipe > " + out + "; timeout 0.2 cat; echo $? >> " +
                      out);
  r.stdin_mode = Stream::Idle;
  Child c = Child::spawn(r);
  c.wait();
  CHECK(slurp(out) == "pipe\n124\n");
  CHECK(open_fds() == fds_before);

  // Once the child is reaped, a reader it left behind gets end of file.
  const std::string eof = t.path + "/eof";
  SpawnRequest left = sh("exec 3<&0; (cat <&3 >/dev/null; echo eof > " + eof + ") & exit 0");
  left.stdin_mode = Stream::Idle;
  Child l = Child::spawn(left);
  l.wait();
  CHECK(l.status()->success());
  CHECK(wait_for_file(eof, 5s));
  CHECK(open_fds() == fds_before);
}

TEST_CASE("launcher process: waiting for signals with a timeout", "[launcher]") {
  SignalScope scope;

  SECTION("timeout") {
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(scope.wait(50ms) == 0);
    const auto waited = std::chrono::steady_clock::now() - t0;
    CHECK(waited >= 45ms);
    CHECK(waited < 2s);
  }
  SECTION("a child's end wakes the waiter") {
    Child c = Child::spawn(sh("exit 4"));
    const auto t0 = std::chrono::steady_clock::now();
    int sig = 0;
    while (sig != SIGCHLD && std::chrono::steady_clock::now() - t0 < 5s) sig = scope.wait(5s);
    CHECK(sig == SIGCHLD);
    CHECK(std::chrono::steady_clock::now() - t0 < 4s);
    CHECK(c.poll());
    CHECK(c.status()->code == 4);
  }
  SECTION("termination signals are taken, not fatal") {
    ::kill(::getpid(), SIGTERM);
    CHECK(scope.wait(1s) == SIGTERM);
    ::kill(::getpid(), SIGINT);
    CHECK(scope.wait(1s) == SIGINT);
    ::kill(::getpid(), SIGHUP);
    CHECK(scope.wait(1s) == SIGHUP);
    CHECK(SignalScope::is_termination(SIGHUP));
    CHECK_FALSE(SignalScope::is_termination(SIGCHLD));
  }
  SECTION("children do not inherit the blocked signals") {
    Child c = Child::spawn(sh("exec sleep 30"));
    c.signal_group(SIGTERM);
    const auto t0 = std::chrono::steady_clock::now();
    while (!c.poll() && std::chrono::steady_clock::now() - t0 < 5s) scope.wait(100ms);
    REQUIRE(c.status());
    CHECK(c.status()->signaled);
    CHECK(c.status()->code == SIGTERM);
  }
  SECTION("a child outliving a deadline is stopped") {
    Child c = Child::spawn(sh("trap '' TERM; sleep 30 & wait; sleep 30"));
    const auto deadline = std::chrono::steady_clock::now() + 100ms;
    while (!c.poll() && std::chrono::steady_clock::now() < deadline) scope.wait(20ms);
    CHECK(c.running());
    c.signal_group(SIGTERM);  // ignored by the shell
    scope.wait(100ms);
    CHECK_FALSE(c.poll());
    c.signal_group(SIGKILL);
    c.wait();
    CHECK(c.status()->code == SIGKILL);
  }
}

TEST_CASE("launcher process: no terminal in tests", "[launcher]") {
  // Under ctest stdin is not the foreground terminal; nothing to hand over.
  if (!::isatty(0)) CHECK(foreground_terminal() == -1);
  give_terminal(-1, 0);  // harmless
  reclaim_terminal(-1, 0);
}
