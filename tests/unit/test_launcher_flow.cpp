// The real vcx-run binary end to end: MPICH's mpiexec runs a stand-in tool
// process (a shell script following the session protocol) and a shell
// command as the application.
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "launcher/paths.h"
#include "launcher/process.h"
#include "support/temp_dir.h"

#ifndef VCX_BIN_DIR
#error "the unit tests are built with VCX_BIN_DIR"
#endif

using namespace vcx::launcher;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string kVcxRun = std::string(VCX_BIN_DIR) + "/vcx-run";

// Stands in for vcx-toolproc; FAKE_MODE picks the behaviour under test.
const char* const kFakeTool = R"(#!/bin/sh
rank="${PMI_RANK:-0}"
out="$FAKE_OUT"
printf '%s\n' "$@" > "$out/args-$rank"
printf '%s\n' "$VCX_SESSION_TOKEN" > "$out/token-$rank"
echo $$ > "$out/toolpid-$rank"
while [ $# -gt 0 ]; do
  case "$1" in --session) session="$2"; shift ;; esac
  shift
done
stats() {
  echo "{\"rank\":$rank,\"events\":10,\"clocked_calls\":4,\"stall_ns\":1000000,\"backpressure_ns\":0,\"app\":\"$1\"}" > "$session/stats-$rank.json"
}
ready() { if [ "$rank" = 0 ]; then : > "$session/ready"; fi; }
case "${FAKE_MODE:-ok}" in
  ok) stats finalized; ready ;;
  chatty) echo "tool chatter on stdout"; stats finalized; ready ;;
  crash-rank1) if [ "$rank" = 1 ]; then stats crashed; else stats finalized; fi; ready ;;
  die-early) echo "fake tool: cannot start" >&2; exit 3 ;;
  never-ready) exec sleep 30 ;;
  fail-later) ready; sleep 0.3; exit 5 ;;
  hang) stats finalized; ready; trap '' TERM; sleep 30; sleep 30 ;;
esac
exit 0
)";

using vcx::test::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
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

// The C library's own file: a harmless library to preload in place of the
// interceptor, which is built elsewhere.
std::string libc_path() {
  void* handle = ::dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(handle != nullptr);
  link_map* map = nullptr;
  REQUIRE(::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0);
  std::string path = map->l_name;
  ::dlclose(handle);
  return path;
}

struct Result {
  ExitStatus status;
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
};

// A stand-in installation plus a scratch directory for one test.
class Fixture {
 public:
  Fixture() {
    fs::create_directories(dir.path + "/plugins");
    fs::create_directories(dir.path + "/out");
    fs::create_directories(dir.path + "/tmp");
    fs::create_symlink(libc_path(), dir.path + "/plugins/" + kInterceptorName);
    // Modules vcx-run checks for; the stand-in tool loads none.
    for (const char* module : {"trace", "race"})
      std::ofstream(dir.path + "/plugins/vcx-module-" + module + ".so");
    tool = dir.path + "/fake-toolproc";
    std::ofstream(tool) << kFakeTool;
    ::chmod(tool.c_str(), 0755);

    env = Environment(environ);
    for (const char* name :
         {"VCX_TOOLPROC", "VCX_PLUGIN_DIR", "VCX_MPIEXEC", "VCX_START_TIMEOUT", "VCX_STOP_TIMEOUT",
          "VCX_SESSION_DIR", "VCX_SESSION_TOKEN", "LD_PRELOAD"})
      env.unset(name);
    env.set("VCX_TOOLPROC", tool);
    env.set("VCX_PLUGIN_DIR", dir.path + "/plugins");
    env.set("TMPDIR", dir.path + "/tmp");
    env.set("FAKE_OUT", out());
    env.set("OUT", out());
  }

  std::string out() const { return dir.path + "/out"; }
  std::string file(const std::string& name) const { return slurp(out() + "/" + name); }
  bool sessions_left() const { return !fs::is_empty(dir.path + "/tmp"); }

  // Runs vcx-run with `args`; `during` runs once vcx-run started, with its pid.
  Result run(const std::vector<std::string>& args, const std::string& cwd = "",
             const std::function<void(pid_t)>& during = {}) {
    SpawnRequest req;
    req.file = "/bin/sh";
    req.argv = {"sh", "-c",
                "cd \"${RUN_CWD:-.}\" && exec \"$0\" \"$@\" >\"$RUN_OUT\" 2>\"$RUN_ERR\"", kVcxRun};
    req.argv.insert(req.argv.end(), args.begin(), args.end());
    Environment e = env;
    e.set("RUN_OUT", dir.path + "/stdout");
    e.set("RUN_ERR", dir.path + "/stderr");
    if (!cwd.empty()) e.set("RUN_CWD", cwd);
    req.env = e.entries();
    // vcx-run hands its stdin to the application's mpiexec, as a user's shell
    // would hand it to a plain mpiexec. Not /dev/null: MPICH forwards its end
    // of file to the first proxy whenever it gets to it, and when these short
    // jobs' proxy has already exited, mpiexec dies of SIGPIPE (plain
    // `mpiexec.mpich ... </dev/null` does too). An empty pipe kept open, like
    // an idle terminal, is never forwarded.
    req.stdin_mode = Stream::Idle;

    const auto t0 = std::chrono::steady_clock::now();
    Child c = Child::spawn(req);
    if (during) during(c.pid());
    // A hanging vcx-run fails the test instead of hanging it.
    while (!c.poll()) {
      if (std::chrono::steady_clock::now() - t0 > 60s) {
        c.signal_group(SIGKILL);
        c.wait();
        FAIL("vcx-run did not end within 60 s");
      }
      std::this_thread::sleep_for(5ms);
    }
    Result r;
    r.status = *c.status();
    r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - t0);
    r.out = slurp(dir.path + "/stdout");
    r.err = slurp(dir.path + "/stderr");
    return r;
  }

  TempDir dir;
  std::string tool;
  Environment env;
};

// An application that leaves what it saw in $OUT/app-<rank>.
const std::string kReportEnv =
    "echo \"$LD_PRELOAD|$VCX_SESSION_DIR|$VCX_SESSION_TOKEN\" > \"$OUT/app-$PMI_RANK\"; "
    "echo \"hello from $PMI_RANK\"";

}  // namespace

TEST_CASE("launcher flow: a program that does not exist", "[launcher][flow]") {
  Fixture f;
  f.env.unset("VCX_TOOLPROC");  // checked before anything of vcx is needed
  for (const std::string prog : {"./no-such-program", "no-such-command-vcx"}) {
    const Result r = f.run({"-n", "2", prog, "arg"});
    INFO(r.err);
    CHECK(r.status.code == 127);
    REQUIRE(lines_of(r.err).size() == 1);
    CHECK(contains(r.err, prog));
    CHECK(r.out.empty());
  }
  CHECK_FALSE(f.sessions_left());
}

TEST_CASE("launcher flow: bad command lines", "[launcher][flow]") {
  Fixture f;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--bogus", "-n", "2", "true"},
           {"-n", "2", "--modules", "nosuch", "true"},
           {"-n", "0", "true"},
           {"-n", "2"}}) {
    const Result r = f.run(args);
    INFO(r.err);
    CHECK(r.status.code == 64);
    CHECK(lines_of(r.err).size() == 1);
  }
  f.env.set("VCX_START_TIMEOUT", "later");
  const Result r = f.run({"-n", "2", "true"});
  CHECK(r.status.code == 64);
  CHECK(contains(r.err, "VCX_START_TIMEOUT"));

  const Result help = f.run({"--help"});
  CHECK(help.status.code == 0);
  CHECK(contains(help.out, "Usage: vcx-run [-n N]"));
  // The modules in the plugin directory, whatever they are.
  CHECK(contains(help.out, "installed for --modules: race, trace"));
  CHECK(help.err.empty());

  const Result version = f.run({"--version"});
  CHECK(version.status.code == 0);
  CHECK(contains(version.out, "vcx-run (vcx) "));
  CHECK(version.err.empty());
}

TEST_CASE("launcher flow: a missing vcx file is named", "[launcher][flow]") {
  Fixture f;
  f.env.set("VCX_PLUGIN_DIR", f.dir.path + "/nowhere");
  const Result r = f.run({"-n", "2", "true"});
  CHECK(r.status.code == 70);
  CHECK(lines_of(r.err).size() == 1);
  CHECK(contains(r.err, f.dir.path + "/nowhere"));
}

TEST_CASE("launcher flow: a clean run", "[launcher][flow]") {
  Fixture f;
  const Result r = f.run({"-v", "-n", "2", "sh", "-c", kReportEnv});
  INFO(r.err);
  CHECK(r.status.code == 0);
  CHECK_FALSE(r.status.signaled);

  // The program's output is its own.
  CHECK(contains(r.out, "hello from 0\n"));
  CHECK(contains(r.out, "hello from 1\n"));
  CHECK(lines_of(r.out).size() == 2);

  // Both jobs share the session and its token; the token never appears on a command line.
  const std::string token = lines_of(f.file("token-0")).at(0);
  CHECK(token.size() == 32);
  CHECK(f.file("token-1") == f.file("token-0"));
  for (int rank : {0, 1}) {
    const auto seen = lines_of(f.file("app-" + std::to_string(rank))).at(0);
    INFO(seen);
    CHECK(seen.rfind(f.dir.path + "/plugins/libvcx-mpi-intercept.so|" + f.dir.path + "/tmp/vcx-",
                     0) == 0);
    CHECK(contains(seen, "|" + token));
  }
  const auto args = lines_of(f.file("args-0"));
  const auto at = [&](const std::string& flag) {
    auto it = std::find(args.begin(), args.end(), flag);
    return it == args.end() || it + 1 == args.end() ? std::string("<none>") : *(it + 1);
  };
  CHECK(at("--session").rfind(f.dir.path + "/tmp/vcx-", 0) == 0);
  CHECK(at("--plugin-dir") == f.dir.path + "/plugins");
  CHECK(at("--translators") == "mpi");
  CHECK(at("--modules") == "<none>");  // the engine is always loaded, and no module
  CHECK(std::find(args.begin(), args.end(), "--no-stall") == args.end());
  CHECK(std::find(args.begin(), args.end(), "--no-shmem-flags") == args.end());
  CHECK_FALSE(contains(f.file("args-0"), token));
  CHECK_FALSE(contains(r.err, token));

  // -v: the commands and the summary.
  CHECK(contains(r.err, "vcx: tool job: "));
  CHECK(contains(r.err, "vcx: application job: "));
  CHECK(contains(r.err, "vcx: 2 ranks, 20 events, 8 clocked calls, stall 2.0 ms total"));
  CHECK_FALSE(f.sessions_left());
}

TEST_CASE("launcher flow: a quiet clean run says nothing", "[launcher][flow]") {
  Fixture f;
  f.env.set("FAKE_MODE", "chatty");
  const Result r = f.run({"-n", "2", "sh", "-c", "echo out-$PMI_RANK"});
  CHECK(r.status.code == 0);
  // The tools' stdout goes to stderr, away from the program's output.
  CHECK(lines_of(r.out).size() == 2);
  CHECK_FALSE(contains(r.out, "tool chatter"));
  CHECK(contains(r.err, "tool chatter"));
  CHECK_FALSE(contains(r.err, "vcx:"));
}

TEST_CASE("launcher flow: tracing and module options reach the tools", "[launcher][flow]") {
  Fixture f;
  const Result r = f.run(
      {"-n", "2", "--trace", "traces/run1", "--no-stall", "--modules", "race,trace",
       "--shmem-flags", "off", "--", "true"},
      f.dir.path);
  INFO(r.err);
  CHECK(r.status.code == 0);
  const std::string trace = f.dir.path + "/traces/run1";
  CHECK(fs::is_directory(trace));
  const std::string args = f.file("args-1");
  CHECK(contains(args, "--modules\ntrace,race\n"));
  CHECK(contains(args, "--option\ntrace.dir=" + trace + "\n"));
  CHECK(contains(args, "--stall\nnever\n"));  // --no-stall is --stall never
  CHECK(contains(args, "--no-shmem-flags\n"));
}

TEST_CASE("launcher flow: --shmem-flags takes on or off", "[launcher][flow]") {
  Fixture f;
  const Result r = f.run({"-n", "2", "--shmem-flags", "maybe", "--", "true"});
  CHECK(r.status.code == 64);
  CHECK(contains(r.err, "vcx: "));
  CHECK(contains(r.err, "shmem-flags"));
  CHECK_FALSE(f.sessions_left());
}

TEST_CASE("launcher flow: the application's exit status is returned", "[launcher][flow]") {
  Fixture f;
  const Result r = f.run({"-n", "2", "sh", "-c", "exit 3"});
  CHECK(r.status.code == 3);
  CHECK(contains(r.err, "vcx: the application job ended with exit status 3"));
  CHECK(contains(r.err, "vcx: 2 ranks, 20 events"));  // something went wrong: summary
  CHECK_FALSE(f.sessions_left());
}

TEST_CASE("launcher flow: a crashed rank is named", "[launcher][flow]") {
  Fixture f;
  f.env.set("FAKE_MODE", "crash-rank1");
  const Result r = f.run({"-n", "2", "sh", "-c", "if [ $PMI_RANK = 1 ]; then kill -SEGV $$; fi"});
  INFO(r.err);
  CHECK(r.status.code != 0);
  CHECK(contains(r.err, "vcx: application rank 1 ended without notice ("));
}

TEST_CASE("launcher flow: how a rank ended is said", "[launcher][flow]") {
  Fixture f;
  f.env.set("FAKE_MODE", "crash-rank1");
  // What the interceptor of a rank killed by SIGSEGV leaves.
  const Result r = f.run({"-n", "2", "sh", "-c",
                          "if [ $PMI_RANK = 1 ]; then echo signal 11 > $VCX_SESSION_DIR/ending-1; "
                          "kill -SEGV $$; fi"});
  INFO(r.err);
  CHECK(r.status.code != 0);
  CHECK(contains(r.err, "vcx: application rank 1 was killed by signal 11 (SIGSEGV)\n"));
  CHECK_FALSE(contains(r.err, "ended without notice"));
}

TEST_CASE("launcher flow: an unknown module is a usage error", "[launcher][flow]") {
  Fixture f;
  const Result r = f.run({"-n", "2", "--modules", "trace,nosuch", "sh", "-c", kReportEnv});
  CHECK(r.status.code == 64);
  CHECK(lines_of(r.err).size() == 1);
  CHECK(contains(r.err, "vcx: --modules: there is no module 'nosuch'"));
  CHECK(contains(r.err, "available: race, trace"));
  CHECK_FALSE(fs::exists(f.out() + "/args-0"));  // no tool started
  CHECK_FALSE(fs::exists(f.out() + "/app-0"));
}

TEST_CASE("launcher flow: an unknown plugin option is a usage error", "[launcher][flow]") {
  Fixture f;
  const Result r = f.run({"-n", "2", "--option", "vclock.ahaed=0", "sh", "-c", kReportEnv});
  CHECK(r.status.code == 64);
  CHECK(lines_of(r.err).size() == 1);
  CHECK(contains(r.err, "vcx: --option: unknown option 'vclock.ahaed' (the plugins take: "));
  CHECK_FALSE(fs::exists(f.out() + "/args-0"));  // no tool started
  CHECK_FALSE(fs::exists(f.out() + "/app-0"));
}

TEST_CASE("launcher flow: the tool job fails to start", "[launcher][flow]") {
  Fixture f;
  f.env.set("FAKE_MODE", "die-early");
  const Result r = f.run({"-n", "2", "sh", "-c", kReportEnv});
  INFO(r.err);
  CHECK(r.status.code == 70);
  CHECK(contains(r.err, "fake tool: cannot start"));
  CHECK(contains(r.err, "vcx: the tool job exited before it was ready ("));
  // The application job started beside it is stopped without a report.
  CHECK_FALSE(contains(r.err, "the application job"));
  CHECK_FALSE(contains(r.err, "ranks"));
  CHECK_FALSE(f.sessions_left());
}

TEST_CASE("launcher flow: the tool job never gets ready", "[launcher][flow]") {
  Fixture f;
  f.env.set("FAKE_MODE", "never-ready");
  f.env.set("VCX_START_TIMEOUT", "0.5");
  // The application job starts beside the tools and would run for a minute
  // (as ranks waiting for tools that never listen would): it is stopped.
  const std::string program = kReportEnv + "; echo $$ > \"$OUT/apppid-$PMI_RANK\"; sleep 60";
  const Result r = f.run({"-n", "2", "sh", "-c", program});
  INFO(r.err);
  CHECK(r.status.code == 70);
  CHECK(contains(r.err, "vcx: the tool job ("));
  CHECK(contains(r.err, f.tool + ") was not ready after 0.5 s"));
  CHECK(contains(r.err, "VCX_START_TIMEOUT"));
  CHECK(r.elapsed < 20s);
  CHECK_FALSE(contains(r.err, "the application job"));
  for (const char* rank : {"0", "1"}) {
    const std::string pid = f.file(std::string("toolpid-") + rank);
    REQUIRE_FALSE(pid.empty());
    CHECK(process_gone(std::stoi(pid), 5s));
    const std::string app = f.file(std::string("apppid-") + rank);
    REQUIRE_FALSE(app.empty());
    CHECK(process_gone(std::stoi(app), 5s));
  }
  CHECK_FALSE(f.sessions_left());
}

TEST_CASE("launcher flow: the tool job fails while the application runs", "[launcher][flow]") {
  Fixture f;
  f.env.set("FAKE_MODE", "fail-later");
  const Result r = f.run({"-n", "2", "sh", "-c", "sleep 1.5"});
  INFO(r.err);
  CHECK(r.status.code == 70);  // the application succeeded, the tool did not
  CHECK(contains(r.err, "vcx: the tool job failed ("));
  CHECK(contains(r.err, "the application's interceptors abort it"));
  CHECK(r.elapsed >= 1400ms);  // the application was not cut short
}

TEST_CASE("launcher flow: asked to continue, a tool failure keeps the status", "[launcher][flow]") {
  Fixture f;
  f.env.set("FAKE_MODE", "fail-later");
  const Result r = f.run({"-n", "2", "--on-tool-failure=continue", "sh", "-c", "sleep 1.5"});
  INFO(r.err);
  CHECK(r.status.code == 0);  // the application's
  CHECK(contains(r.err, "vcx: the tool job failed ("));
  CHECK(contains(r.err, "the application runs on unanalysed"));
}

TEST_CASE("launcher flow: a tool job that does not finish is stopped", "[launcher][flow]") {
  Fixture f;
  f.env.set("FAKE_MODE", "hang");
  f.env.set("VCX_STOP_TIMEOUT", "0.3");
  const Result r = f.run({"-n", "2", "true"});
  INFO(r.err);
  CHECK(r.status.code == 70);
  CHECK(contains(r.err, "vcx: the tool job did not finish within 0.3 s after the application"));
  CHECK(r.elapsed < 20s);
  for (const char* rank : {"0", "1"})
    CHECK(process_gone(std::stoi(f.file(std::string("toolpid-") + rank)), 5s));
  CHECK_FALSE(f.sessions_left());
}

TEST_CASE("launcher flow: SIGTERM reaches both jobs", "[launcher][flow]") {
  Fixture f;
  const Result r =
      f.run({"-n", "2", "sh", "-c", "echo $$ > \"$OUT/app-$PMI_RANK\"; exec sleep 30"}, "",
            [&](pid_t pid) {
              const auto end = std::chrono::steady_clock::now() + 20s;
              while (std::chrono::steady_clock::now() < end &&
                     !(fs::exists(f.out() + "/app-0") && fs::exists(f.out() + "/app-1")))
                std::this_thread::sleep_for(10ms);
              std::this_thread::sleep_for(50ms);  // let the pids be written
              ::kill(pid, SIGTERM);
            });
  INFO(r.err);
  // mpiexec's own status (15 for its ranks' SIGTERM) or 128+15 when it reported success.
  CHECK((r.status.code == 15 || r.status.code == 128 + 15));
  CHECK(contains(r.err, "vcx: interrupted by SIGTERM"));
  CHECK(r.elapsed < 20s);
  for (const char* rank : {"0", "1"}) {
    const std::string pid = f.file(std::string("app-") + rank);
    REQUIRE_FALSE(pid.empty());
    CHECK(process_gone(std::stoi(pid), 5s));
  }
  CHECK_FALSE(f.sessions_left());
}

TEST_CASE("launcher flow: --keep-session keeps the session", "[launcher][flow]") {
  Fixture f;
  const Result r = f.run({"-n", "2", "--keep-session", "true"});
  CHECK(r.status.code == 0);
  const std::string marker = "vcx: session directory kept: ";
  const auto pos = r.err.find(marker);
  REQUIRE(pos != std::string::npos);
  const std::string dir = lines_of(r.err.substr(pos + marker.size())).at(0);
  CHECK(fs::exists(dir + "/ready"));
  CHECK(fs::exists(dir + "/stats-0.json"));
  CHECK(fs::exists(dir + "/stats-1.json"));
  CHECK(slurp(dir + "/app-exited") == "exit 0\n");
  struct stat st {};
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
}
