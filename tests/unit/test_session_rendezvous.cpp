// The tool job's start-up exchange through the session directory: tools
// started in any order each learn every endpoint, or that one failed and
// why; a tool that never publishes makes the others give up, saying which.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "vcx/session_rendezvous.h"
#include "support/temp_dir.h"

using vcx::Rendezvous;
using vcx::rendezvous_in_session;
using namespace std::chrono_literals;

namespace {

using vcx::test::TempDir;

// Runs `size` tools as threads, tool t starting after delay(t); failing
// tools give `why-t` instead of an endpoint.
std::vector<std::optional<Rendezvous>> run_tools(const std::string& dir, std::uint32_t size,
                                                 const std::vector<std::uint32_t>& failing,
                                                 std::chrono::milliseconds timeout,
                                                 std::vector<std::string>* errors,
                                                 std::uint32_t absent = ~0u) {
  std::vector<std::optional<Rendezvous>> out(size);
  errors->assign(size, "");
  std::vector<std::thread> tools;
  for (std::uint32_t t = 0; t < size; ++t) {
    if (t == absent) continue;
    tools.emplace_back([&, t] {
      std::this_thread::sleep_for(std::chrono::milliseconds(((size - t) * 7) % 23));
      const bool ok = std::find(failing.begin(), failing.end(), t) == failing.end();
      const std::string text = ok ? "host:" + std::to_string(4000 + t) + " pid node"
                                  : "why-" + std::to_string(t);
      out[t] = rendezvous_in_session(dir, t, size, ok, text, timeout, &(*errors)[t]);
    });
  }
  for (std::thread& th : tools) th.join();
  return out;
}

}  // namespace

TEST_CASE("rendezvous: every tool learns every endpoint, by rank", "[rendezvous]") {
  TempDir dir;
  std::vector<std::string> errors;
  const auto got = run_tools(dir.path, 5, {}, 10s, &errors);
  for (std::uint32_t t = 0; t < 5; ++t) {
    INFO("tool " << t << ": " << errors[t]);
    REQUIRE(got[t]);
    CHECK(got[t]->all_ok);
    REQUIRE(got[t]->endpoints.size() == 5);
    for (std::uint32_t e = 0; e < 5; ++e)
      CHECK(got[t]->endpoints[e] == "host:" + std::to_string(4000 + e) + " pid node");
  }
}

TEST_CASE("rendezvous: a tool that failed makes every tool stop, naming it", "[rendezvous]") {
  TempDir dir;
  std::vector<std::string> errors;
  const auto got = run_tools(dir.path, 4, {2, 3}, 10s, &errors);
  for (std::uint32_t t = 0; t < 4; ++t) {
    INFO("tool " << t << ": " << errors[t]);
    REQUIRE(got[t]);
    CHECK_FALSE(got[t]->all_ok);
    CHECK(got[t]->failure == "rank 2: why-2");  // the first failure by rank
  }
}

TEST_CASE("rendezvous: a tool that never comes makes the others give up", "[rendezvous]") {
  TempDir dir;
  std::vector<std::string> errors;
  const auto got = run_tools(dir.path, 3, {}, 300ms, &errors, /*absent=*/1);
  CHECK_FALSE(got[0]);
  CHECK(errors[0] == "tool 1 did not start within 0.3 s");
  CHECK_FALSE(got[2]);
  CHECK(errors[2].find("tool 0 did not gather the tools") == 0);
}
