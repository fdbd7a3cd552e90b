// A directory of its own under /tmp for one test, removed with everything
// in it when the test ends.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace vcx::test {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/vcx-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // The path of `name` in the directory (nothing is created).
  std::string at(const std::string& name) const { return path + "/" + name; }
  // Writes `text` to `name` (creating its directories) with `mode`; returns
  // its path.
  std::string file(const std::string& name, const std::string& text = "",
                   int mode = 0644) const {
    const std::string p = at(name);
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << text;
    ::chmod(p.c_str(), static_cast<mode_t>(mode));
    return p;
  }

  std::string path;
};

}  // namespace vcx::test
