// Where vcx-run finds the program and its own files, the session directory
// and the commands it builds from them.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "launcher/launcher.h"
#include "launcher/paths.h"
#include "launcher/session.h"
#include "support/temp_dir.h"

using namespace vcx::launcher;
using vcx::session::Channel;
using vcx::session::Stall;
using vcx::session::Transport;
namespace fs = std::filesystem;

namespace {

using vcx::test::TempDir;

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("launcher paths: environment copy", "[launcher]") {
  Environment env({"A=1", "AB=2", "EMPTY="});
  CHECK(env.get("A") == std::optional<std::string>("1"));
  CHECK(env.get("AB") == std::optional<std::string>("2"));
  CHECK_FALSE(env.get("B"));
  CHECK(env.get("EMPTY") == std::optional<std::string>(""));
  CHECK_FALSE(env.get_nonempty("EMPTY"));
  env.set("A", "x=y");
  CHECK(env.get("A") == std::optional<std::string>("x=y"));
  env.set("C", "3");
  env.unset("AB");
  CHECK(env.entries() == std::vector<std::string>{"A=x=y", "EMPTY=", "C=3"});
}

TEST_CASE("launcher paths: programs are resolved like a shell does", "[launcher]") {
  TempDir t;
  const std::string tool = t.file("bin1/mytool", "#!/bin/sh\n", 0755);
  t.file("bin2/mytool", "#!/bin/sh\n", 0755);
  t.file("bin1/plain", "data", 0644);
  fs::create_directories(t.path + "/bin1/adir");

  SECTION("first match in PATH") {
    auto r = resolve_program("mytool", t.path + "/none:" + t.path + "/bin1:" + t.path + "/bin2");
    REQUIRE(r.ok());
    CHECK(r.path == tool);
  }
  SECTION("not in PATH") {
    auto r = resolve_program("mytool", std::string("/nonexistent-dir"));
    CHECK(r.error == "command not found");
  }
  SECTION("found but not executable") {
    auto r = resolve_program("plain", t.path + "/bin1");
    CHECK(r.error == "Permission denied");
  }
  SECTION("directories are skipped in PATH") {
    auto r = resolve_program("adir", t.path + "/bin1");
    CHECK(r.error == "command not found");
  }
  SECTION("names with a slash are paths") {
    CHECK(resolve_program(tool, std::nullopt).path == tool);
    CHECK(resolve_program(t.path + "/missing", std::nullopt).error == "No such file or directory");
    CHECK(resolve_program(t.path + "/bin1/plain", std::nullopt).error == "Permission denied");
    CHECK(resolve_program(t.path + "/bin1", std::nullopt).error == "Is a directory");
  }
  SECTION("an empty PATH entry is the current directory") {
    char old[4096];
    REQUIRE(::getcwd(old, sizeof old) != nullptr);
    REQUIRE(::chdir((t.path + "/bin1").c_str()) == 0);
    auto r = resolve_program("mytool", std::string("/nonexistent-dir::"));
    REQUIRE(::chdir(old) == 0);
    REQUIRE(r.ok());
    CHECK(r.path == "./mytool");
  }
  SECTION("unset PATH uses the system default") {
    auto r = resolve_program("sh", std::nullopt);
    REQUIRE(r.ok());
    CHECK(r.path.find("/sh") != std::string::npos);
  }
  CHECK(resolve_program("", std::nullopt).error == "empty program name");
}

TEST_CASE("launcher paths: files are found relative to bin/", "[launcher]") {
  const Environment none({});
  auto p = install_paths("/opt/vcx/bin", none);
  CHECK(p.toolproc == "/opt/vcx/bin/vcx-toolproc");
  CHECK(p.plugin_dir == "/opt/vcx/lib/vcx");
  CHECK(p.interceptor == "/opt/vcx/lib/vcx/libvcx-mpi-intercept.so");
  CHECK(p.mpiexec == default_mpiexec());

  auto o = install_paths(
      "/opt/vcx/bin",
      Environment({"VCX_TOOLPROC=/x/tp", "VCX_PLUGIN_DIR=/y/plug/", "VCX_MPIEXEC=/z/mpiexec"}));
  CHECK(o.toolproc == "/x/tp");
  CHECK(o.plugin_dir == "/y/plug");
  CHECK(o.interceptor == "/y/plug/libvcx-mpi-intercept.so");
  CHECK(o.mpiexec == "/z/mpiexec");

  CHECK_FALSE(self_bindir().empty());
}

TEST_CASE("launcher paths: a missing file is named", "[launcher]") {
  TempDir t;
  t.file("bin/vcx-toolproc", "#!/bin/sh\n", 0755);
  fs::create_directories(t.path + "/lib/vcx");
  auto paths = install_paths(t.path + "/bin", Environment({}));
  paths.mpiexec = "sh";  // any executable found through PATH

  auto err = check_install(paths, std::string("/usr/bin:/bin"));
  REQUIRE(err);
  CHECK(err->find(t.path + "/lib/vcx/libvcx-mpi-intercept.so") != std::string::npos);

  t.file("lib/vcx/libvcx-mpi-intercept.so", "x");
  CHECK_FALSE(check_install(paths, std::string("/usr/bin:/bin")));
  CHECK(paths.mpiexec.find('/') != std::string::npos);  // resolved

  paths.mpiexec = "no-such-mpiexec";
  err = check_install(paths, std::string("/usr/bin:/bin"));
  REQUIRE(err);
  CHECK(err->find("VCX_MPIEXEC") != std::string::npos);

  auto gone = install_paths(t.path + "/nowhere/bin", Environment({}));
  err = check_install(gone, std::string("/usr/bin:/bin"));
  REQUIRE(err);
  CHECK(err->find(t.path + "/nowhere/bin/vcx-toolproc") != std::string::npos);
  CHECK(err->find('\n') == std::string::npos);
}

TEST_CASE("launcher session: token, directory and cleanup", "[launcher]") {
  const std::string a = random_token(), b = random_token();
  CHECK(a.size() == 32);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != b);

  TempDir t;
  std::string dir;
  {
    Session s = Session::create(t.path);
    dir = s.dir();
    CHECK(dir.rfind(t.path + "/vcx-", 0) == 0);
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    CHECK(s.token().size() == 32);
    CHECK_FALSE(s.ready());
    std::ofstream(s.path("ready")).put('\n');
    CHECK(s.ready());
    fs::create_directories(dir + "/sub/deeper");
    std::ofstream(dir + "/sub/deeper/file") << "x";
  }
  CHECK_FALSE(fs::exists(dir));  // removed with its contents

  {
    Session s = Session::create(t.path);
    dir = s.dir();
    s.keep();
  }
  CHECK(fs::is_directory(dir));

  CHECK_THROWS_WITH(Session::create(t.path + "/missing"),
                    Catch::Contains("cannot create a session directory"));
}

TEST_CASE("launcher session: where session directories go", "[launcher]") {
  CHECK(session_parent(std::nullopt) == "/tmp");
  CHECK(session_parent(std::string("")) == "/tmp");
  CHECK(session_parent(std::string("relative/dir")) == "/tmp");
  CHECK(session_parent(std::string("/scratch/me/")) == "/scratch/me");
  CHECK(session_parent("/" + std::string(100, 'x')) == "/tmp");  // socket paths would not fit
}

TEST_CASE("launcher session: the trace directory", "[launcher]") {
  TempDir t;
  const std::string made = prepare_output_dir(t.path + "/a/b/../c/");
  CHECK(made == t.path + "/a/c");
  struct stat st {};
  REQUIRE(::stat(made.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(prepare_output_dir(made) == made);  // existing is fine

  char old[4096];
  REQUIRE(::getcwd(old, sizeof old) != nullptr);
  REQUIRE(::chdir(t.path.c_str()) == 0);
  const std::string rel = prepare_output_dir("rel");
  REQUIRE(::chdir(old) == 0);
  CHECK(rel == t.path + "/rel");

  const std::string f = t.file("afile", "x");
  CHECK_THROWS_WITH(prepare_output_dir(f), Catch::Contains("not a directory"));
  CHECK_THROWS(prepare_output_dir(f + "/sub"));
}

TEST_CASE("launcher session: an earlier trace's rank files are removed, nothing else",
          "[launcher]") {
  TempDir t;
  const std::string dir = prepare_output_dir(t.path + "/trace");
  for (const char* name : {"rank-0.vcxt", "rank-12.vcxt", "rank-x.vcxt", "rank-.vcxt",
                           "rank-1.vcxt.bak", "notes.txt"})
    std::ofstream(dir + "/" + name) << "x";
  CHECK(remove_trace_files(dir) == 2);
  CHECK_FALSE(fs::exists(dir + "/rank-0.vcxt"));
  CHECK_FALSE(fs::exists(dir + "/rank-12.vcxt"));
  for (const char* name : {"rank-x.vcxt", "rank-.vcxt", "rank-1.vcxt.bak", "notes.txt"})
    CHECK(fs::exists(dir + "/" + name));
  CHECK(remove_trace_files(dir) == 0);
}

TEST_CASE("launcher commands: several programs in the application job", "[launcher]") {
  Plan plan;
  plan.options.nprocs = 4;
  plan.options.first_nprocs = 1;
  plan.options.program_args = {"x"};
  plan.options.more_programs = {AppSegment{3, "b", {"y", "z"}, {{"A", "1"}}}};
  plan.program = "./a";
  plan.more_programs = {"b"};
  plan.paths.mpiexec = "/usr/bin/mpiexec.mpich";
  plan.paths.toolproc = "/p/bin/vcx-toolproc";
  plan.paths.plugin_dir = "/p/lib/vcx";
  const auto app = app_command(plan, "/p/lib/vcx/libvcx-mpi-intercept.so");
  CHECK(app == std::vector<std::string>{"/usr/bin/mpiexec.mpich", "-genv", "LD_PRELOAD",
                                        "/p/lib/vcx/libvcx-mpi-intercept.so", "-n", "1", "./a",
                                        "x", ":", "-n", "3", "-env", "A", "1", "b", "y", "z"});
  // The tool job: one tool per rank of every program.
  const auto tool = tool_command(plan, "/tmp/vcx-abc");
  CHECK(tool[1] == "-n");
  CHECK(tool[2] == "4");
}

TEST_CASE("launcher commands: mpiexec's options reach the application job only",
          "[launcher]") {
  Plan plan;
  plan.options.nprocs = 2;
  plan.options.app_env = {{"A", "1"}};
  plan.options.prepend_rank = true;
  plan.options.bind_to = "core";
  plan.options.launcher_args = {"-iface", "eth0"};
  plan.program = "./app";
  plan.paths.mpiexec = "/usr/bin/mpiexec.mpich";
  plan.paths.toolproc = "/p/bin/vcx-toolproc";
  plan.paths.plugin_dir = "/p/lib/vcx";
  const auto app = app_command(plan, "/p/i.so");
  CHECK(app == std::vector<std::string>{"/usr/bin/mpiexec.mpich", "-iface", "eth0", "-genv", "A",
                                        "1", "-prepend-rank", "-bind-to", "core", "-genv",
                                        "LD_PRELOAD", "/p/i.so", "-n", "2", "./app"});
  const auto tool = tool_command(plan, "/tmp/vcx-abc");
  for (const char* word : {"-iface", "-prepend-rank", "-bind-to", "A"})
    CHECK(std::find(tool.begin(), tool.end(), word) == tool.end());

  plan.launcher = LauncherKind::OpenMpi;
  plan.launcher_program = "/usr/bin/oshrun";
  const auto osh = app_command(plan, "/p/i.so");
  for (const char* word : {"-iface", "A=1", "--tag-output"})
    CHECK(std::find(osh.begin(), osh.end(), word) != osh.end());
  const auto bind = std::find(osh.begin(), osh.end(), "--bind-to");
  REQUIRE(bind != osh.end());
  CHECK(*(bind + 1) == "core");
}

TEST_CASE("launcher commands: the two jobs", "[launcher]") {
  Plan plan;
  plan.options.nprocs = 3;
  plan.options.program_args = {"-x", "y z"};
  plan.program = "./app";
  plan.paths.mpiexec = "/usr/bin/mpiexec.mpich";
  plan.paths.toolproc = "/p/bin/vcx-toolproc";
  plan.paths.plugin_dir = "/p/lib/vcx";
  plan.paths.interceptor = "/p/lib/vcx/libvcx-mpi-intercept.so";

  auto tool = tool_command(plan, "/tmp/vcx-abc");
  CHECK(tool == std::vector<std::string>{"/usr/bin/mpiexec.mpich", "-n", "3", "/p/bin/vcx-toolproc",
                                         "--session", "/tmp/vcx-abc", "--plugin-dir", "/p/lib/vcx",
                                         "--translators", "mpi"});

  plan.trace_dir = "/abs/trace";
  plan.options.trace_dir = "trace";
  plan.options.stall = Stall::Waits;
  plan.options.extra_modules = {"race"};
  tool = tool_command(plan, "/tmp/vcx-abc");
  CHECK(contains(tool, "trace,race"));
  CHECK(contains(tool, "trace.dir=/abs/trace"));
  // One node: the tools start through the session directory, without MPI.
  CHECK(std::find(tool.begin(), tool.end(), "--mpi-start") == tool.end());
  CHECK(std::vector<std::string>(tool.end() - 2, tool.end()) ==
        std::vector<std::string>{"--stall", "waits"});

  const std::string preload = preload_value(plan.paths.interceptor, std::string("/other.so"));
  CHECK(preload == "/p/lib/vcx/libvcx-mpi-intercept.so:/other.so");
  CHECK(preload_value("/i.so", std::nullopt) == "/i.so");
  CHECK(preload_value("/i.so", std::string("")) == "/i.so");
  auto app = app_command(plan, preload);
  CHECK(app == std::vector<std::string>{"/usr/bin/mpiexec.mpich", "-genv", "LD_PRELOAD", preload,
                                        "-n", "3", "./app", "-x", "y z"});

  const Environment base({"PATH=/bin", "VCX_SESSION_DIR=/stale"});
  const std::string token(32, 'a');
  auto tenv = tool_environment(base, token);
  CHECK(tenv.get("VCX_SESSION_TOKEN") == std::optional<std::string>(token));
  CHECK_FALSE(tenv.get("VCX_SESSION_DIR"));
  auto aenv = app_environment(base, "/tmp/vcx-abc", token);
  CHECK(aenv.get("VCX_SESSION_DIR") == std::optional<std::string>("/tmp/vcx-abc"));
  CHECK(aenv.get("VCX_SESSION_TOKEN") == std::optional<std::string>(token));
  CHECK(aenv.get("PATH") == std::optional<std::string>("/bin"));
  // The token travels in the environment only.
  for (const auto& word : tool) CHECK(word.find(token) == std::string::npos);
  for (const auto& word : app) CHECK(word.find(token) == std::string::npos);
}

TEST_CASE("launch commands: forced matches travel inline, or in a file when long",
          "[launcher]") {
  const Environment base({"PATH=/bin"});
  const std::string token(32, 'b');
  LaunchOptions options;
  options.forced_matches = {{1, 0, 2}, {0, 7, 1}};
  auto env = app_environment(base, "/tmp/unused", token, options);
  CHECK(env.get("VCX_FORCE_MATCH") == std::optional<std::string>("1:0=2,0:7=1"));

  // A replay pinning thousands of receives: more than one environment
  // string may hold, so the list goes to a file in the session directory.
  char dir[] = "/tmp/vcx-force-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  options.forced_matches.clear();
  std::string expected;
  for (int i = 0; i < 20000; ++i) {
    options.forced_matches.push_back({i % 4, static_cast<std::uint64_t>(i), (i + 1) % 4});
    expected += (expected.empty() ? "" : ",") + std::to_string(i % 4) + ":" +
                std::to_string(i) + "=" + std::to_string((i + 1) % 4);
  }
  env = app_environment(base, dir, token, options);
  const auto value = env.get("VCX_FORCE_MATCH");
  REQUIRE(value);
  CHECK(*value == "@" + std::string(dir) + "/force-match");
  std::ifstream in(value->substr(1));
  std::string text;
  std::getline(in, text);
  CHECK(text == expected);
  std::filesystem::remove_all(dir);

  options.forced_matches.clear();
  const Environment stale({"VCX_FORCE_MATCH=1:0=1"});
  CHECK_FALSE(app_environment(stale, "/tmp/unused", token, options).get("VCX_FORCE_MATCH"));
}
