// The stack sampler on a child of this process parked in a known function:
// its main thread's stack names that function, the function this file calls
// it from, and main; a process that is gone gives an error, not a crash.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "vcx/stack_sampler.h"

extern "C" __attribute__((noinline)) void vcx_test_parked_here(volatile int* ready) {
  *ready = 1;
  for (;;) ::pause();
}

namespace {

__attribute__((noinline)) void park_the_child() {
  volatile int ready = 0;
  vcx_test_parked_here(&ready);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("sample_stacks unwinds a parked child to the function it waits in", "[stacks]") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) park_the_child();
  std::string line, error;
  // The child may not have reached the function yet: sample until it has.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto stacks = vcx::sample_stacks(child, &error);
    if (!stacks.empty()) {
      const auto lines = vcx::describe_stacks(child, stacks, {"vcx_test_"});
      if (!lines.empty() && contains(lines[0], "vcx_test_parked_here")) {
        line = lines[0];
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  INFO("error: " << error << "; line: " << line);
  REQUIRE_FALSE(line.empty());
  CHECK(line.rfind("thread " + std::to_string(child) + " (main): vcx_test_parked_here", 0) == 0);
  // The entry call's caller by name and line, out to main.
  CHECK(contains(line, "park_the_child() (test_stack_sampler.cpp:"));
  CHECK(contains(line, "<- main"));
}

TEST_CASE("sample_stacks of a process that is gone says why", "[stacks]") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  std::string error;
  CHECK(vcx::sample_stacks(child, &error).empty());
  CHECK_FALSE(error.empty());
}
