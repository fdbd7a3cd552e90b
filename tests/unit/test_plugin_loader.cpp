// Loading plugins by name: the built plugins load with the right descriptor,
// and every way of getting it wrong ends in an error that says what to do.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "vcx/plugin.h"
#include "vcx/plugin_loader.h"

namespace fs = std::filesystem;
using namespace vcx;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "vcx-plugin-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The message of the runtime_error thrown by f, or "" if none was thrown.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

using Catch::Matchers::Contains;

}  // namespace

TEST_CASE("plugin file names follow vcx-<kind>-<name>.so", "[plugin]") {
  CHECK(plugin_file_name(PluginKind::Engine, "vclock") == "vcx-engine-vclock.so");
  CHECK(plugin_file_name(PluginKind::Translator, "mpi") == "vcx-translator-mpi.so");
  CHECK(plugin_file_name(PluginKind::Module, "trace") == "vcx-module-trace.so");
}

TEST_CASE("the built plugins are found and load with matching descriptors", "[plugin]") {
  const auto engines = available_plugins(VCX_PLUGIN_DIR, PluginKind::Engine);
  const auto translators = available_plugins(VCX_PLUGIN_DIR, PluginKind::Translator);
  CHECK(std::find(engines.begin(), engines.end(), "vclock") != engines.end());
  CHECK(std::find(translators.begin(), translators.end(), "mpi") != translators.end());
  // The kinds are not mixed up.
  CHECK(std::find(engines.begin(), engines.end(), "mpi") == engines.end());

  LoadedPlugin e = load_plugin(VCX_PLUGIN_DIR, PluginKind::Engine, "vclock");
  REQUIRE(e.descriptor != nullptr);
  CHECK(e.handle != nullptr);
  CHECK(std::string(e.descriptor->name) == "vclock");
  CHECK(e.descriptor->kind == PluginKind::Engine);
  CHECK(e.descriptor->abi_version == kPluginAbiVersion);
  CHECK(e.descriptor->create != nullptr);
  CHECK(fs::path(e.path).filename() == "vcx-engine-vclock.so");
  unload_plugin(e);
  CHECK(e.handle == nullptr);
  CHECK(e.descriptor == nullptr);

  LoadedPlugin t = load_plugin(VCX_PLUGIN_DIR, PluginKind::Translator, "mpi");
  CHECK(std::string(t.descriptor->name) == "mpi");
  CHECK(t.descriptor->kind == PluginKind::Translator);
  unload_plugin(t);
}

TEST_CASE("the built plugins describe themselves and their options", "[plugin]") {
  const std::string text = describe_plugins(VCX_PLUGIN_DIR);
  CHECK(text.find("engine vclock: ") != std::string::npos);
  CHECK(text.find("  vclock.diff-bytes=N (default: 67108864)\n") != std::string::npos);
  CHECK(text.find("  vclock.ahead=0|1 (default: 1)\n") != std::string::npos);
  CHECK(text.find("translator mpi: ") != std::string::npos);
  CHECK(text.find("module trace: ") != std::string::npos);
  CHECK(text.find("  trace.dir=TEXT\n") != std::string::npos);
  // A plugin that declares nothing says so.
  const auto mpi = text.find("translator mpi: ");
  const std::string none = "  (no options)\n";
  CHECK(text.compare(text.find('\n', mpi) + 1, none.size(), none) == 0);
  CHECK(describe_plugins("/nonexistent-vcx-plugins").empty());
}

TEST_CASE("an unknown plugin name is refused with the list of available ones", "[plugin]") {
  const std::string msg =
      error_of([] { load_plugin(VCX_PLUGIN_DIR, PluginKind::Engine, "no-such-engine"); });
  REQUIRE_FALSE(msg.empty());
  CHECK_THAT(msg, Contains("no-such-engine"));
  CHECK_THAT(msg, Contains("available"));
  CHECK_THAT(msg, Contains("vclock"));

  const std::string tmsg =
      error_of([] { load_plugin(VCX_PLUGIN_DIR, PluginKind::Translator, "fortran77"); });
  CHECK_THAT(tmsg, Contains("fortran77"));
  CHECK_THAT(tmsg, Contains("mpi"));
}

TEST_CASE("an empty or missing plugin directory says that nothing is available", "[plugin]") {
  TempDir dir;
  CHECK(available_plugins(dir.path(), PluginKind::Engine).empty());
  const std::string msg = error_of([&] { load_plugin(dir.path(), PluginKind::Engine, "vclock"); });
  CHECK_THAT(msg, Contains("vclock"));
  CHECK_THAT(msg, Contains("(none)"));

  const std::string missing = dir / "does-not-exist";
  CHECK(available_plugins(missing, PluginKind::Engine).empty());
  CHECK_FALSE(error_of([&] { load_plugin(missing, PluginKind::Engine, "vclock"); }).empty());
}

TEST_CASE("a file that is not a shared object is refused with its path", "[plugin]") {
  TempDir dir;
  const std::string path = dir / "vcx-engine-bogus.so";
  std::ofstream(path) << "this is a text file, not an ELF shared object\n";
  // It is listed (the name fits) but cannot be loaded.
  const auto names = available_plugins(dir.path(), PluginKind::Engine);
  REQUIRE(names.size() == 1);
  CHECK(names[0] == "bogus");

  const std::string msg = error_of([&] { load_plugin(dir.path(), PluginKind::Engine, "bogus"); });
  REQUIRE_FALSE(msg.empty());
  CHECK_THAT(msg, Contains(path));
  CHECK_THAT(msg, Contains("cannot load"));
}

TEST_CASE("a real shared object without the vcx entry point is not a vcx plugin", "[plugin]") {
  // Any library of the running process will do: take the one providing cos().
  Dl_info info{};
  double (*cos_fn)(double) = &::cos;
  REQUIRE(dladdr(reinterpret_cast<void*>(cos_fn), &info) != 0);
  REQUIRE(info.dli_fname != nullptr);
  TempDir dir;
  const std::string path = dir / "vcx-module-notaplugin.so";
  fs::copy_file(info.dli_fname, path);

  const std::string msg =
      error_of([&] { load_plugin(dir.path(), PluginKind::Module, "notaplugin"); });
  INFO("library copied from " << info.dli_fname);
  REQUIRE_FALSE(msg.empty());
  CHECK_THAT(msg, Contains(path));
  CHECK_THAT(msg, Contains("not a vcx plugin"));
  CHECK_THAT(msg, Contains(kPluginEntryPoint));
}

TEST_CASE("a plugin of another kind is refused under the wrong kind", "[plugin]") {
  // The real MPI translator, installed where an engine is looked for.
  TempDir dir;
  const std::string path = dir / "vcx-engine-mpi.so";
  fs::copy_file(std::string(VCX_PLUGIN_DIR) + "/vcx-translator-mpi.so", path);
  const std::string msg = error_of([&] { load_plugin(dir.path(), PluginKind::Engine, "mpi"); });
  REQUIRE_FALSE(msg.empty());
  CHECK_THAT(msg, Contains(path));
  CHECK_THAT(msg, Contains("engine"));
}
