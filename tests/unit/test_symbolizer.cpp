// The symbolizer on this very process: a call site in this file (the test
// binary is a PIE built with -g, so this covers the load bias), a function
// in libc (a shared library, whose debug info may or may not be installed),
// and inputs that must give empty or partial locations rather than crash.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "vcx/symbolizer.h"

using vcx::describe;
using vcx::SourceLocation;
using vcx::Symbolizer;

namespace {

std::string self_maps() {
  std::ifstream in("/proc/self/maps");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

__attribute__((noinline)) std::uint64_t return_address() {
  return reinterpret_cast<std::uint64_t>(__builtin_return_address(0));
}

struct CallSite {
  std::uint64_t return_address;
  int line;
};

// noinline so that the symbol table names this function, not the test case.
__attribute__((noinline)) CallSite symbolizer_call_site() {
  CallSite s{};
  s.return_address = return_address(); s.line = __LINE__;
  return s;
}

// A call made inside a function inlined into another: the return address
// lies in inlined code.
struct InlinedSite {
  std::uint64_t return_address;
  int inner_line;
  int outer_line;
};
__attribute__((always_inline)) inline std::uint64_t inlined_caller(int* line) {
  const std::uint64_t ra = return_address(); *line = __LINE__;
  return ra;
}
__attribute__((noinline)) InlinedSite symbolizer_inlined_call_site() {
  InlinedSite s{};
  s.return_address = inlined_caller(&s.inner_line); s.outer_line = __LINE__;
  return s;
}

}  // namespace

TEST_CASE("a call in inlined code resolves through the functions inlined there",
          "[symbolizer]") {
  const InlinedSite site = symbolizer_inlined_call_site();
  Symbolizer sym(self_maps());
  const auto chain = sym.resolve_inlined_return_address(site.return_address);
  REQUIRE(chain.size() == 2);
  CHECK(ends_with(chain[0].file, "test_symbolizer.cpp"));
  CHECK(chain[0].line == site.inner_line);
  CHECK(chain[0] == sym.resolve_return_address(site.return_address));
  CHECK(ends_with(chain[1].file, "test_symbolizer.cpp"));
  CHECK(chain[1].line == site.outer_line);
  CHECK(chain[1].function.find("symbolizer_inlined_call_site") != std::string::npos);

  // A call outside inlined code is its own chain.
  const CallSite plain = symbolizer_call_site();
  const auto one = sym.resolve_inlined_return_address(plain.return_address);
  REQUIRE(one.size() == 1);
  CHECK(one[0].line == plain.line);
  CHECK(Symbolizer("").resolve_inlined_return_address(plain.return_address).size() == 1);
}

TEST_CASE("a call site in this binary resolves to its file, line and function", "[symbolizer]") {
  const CallSite site = symbolizer_call_site();
  Symbolizer sym(self_maps());
  const SourceLocation l = sym.resolve_return_address(site.return_address);
  INFO(describe(l, site.return_address) << " in " << l.function);

  // By name: under valgrind /proc/self/exe is the valgrind tool.
  REQUIRE(ends_with(l.object, "/vcx-unit-tests"));
  REQUIRE(ends_with(l.file, "test_symbolizer.cpp"));
  REQUIRE(l.line == site.line);
  REQUIRE(l.has_line());
  REQUIRE(l.function.find("symbolizer_call_site") != std::string::npos);
  REQUIRE(describe(l, site.return_address) == l.file + ":" + std::to_string(site.line));

  // The offset is relative to the load base, as dladdr sees it.
  Dl_info info{};
  REQUIRE(dladdr(reinterpret_cast<void*>(site.return_address), &info) != 0);
  REQUIRE(l.offset == site.return_address - 1 - reinterpret_cast<std::uint64_t>(info.dli_fbase));

  // Cached: the same answer again.
  REQUIRE(sym.resolve_return_address(site.return_address) == l);
}

TEST_CASE("an address in libc resolves to libc and a symbol", "[symbolizer]") {
  void* printf_addr = dlsym(RTLD_DEFAULT, "printf");
  REQUIRE(printf_addr != nullptr);
  const auto address = reinterpret_cast<std::uint64_t>(printf_addr);
  Dl_info info{};
  REQUIRE(dladdr(printf_addr, &info) != 0);

  Symbolizer sym(self_maps());
  const SourceLocation l = sym.resolve(address);
  INFO(describe(l, address) << " in " << l.function);

  REQUIRE(l.object.find("libc") != std::string::npos);
  REQUIRE(std::filesystem::equivalent(l.object, info.dli_fname));
  REQUIRE(l.offset == address - reinterpret_cast<std::uint64_t>(info.dli_fbase));
  // printf or one of its aliases (_IO_printf).
  REQUIRE(l.function.find("printf") != std::string::npos);
  // Line info only where libc's debug info is installed (libc6-dbg).
  if (l.has_line())
    REQUIRE(describe(l, address) == l.file + ":" + std::to_string(l.line));
  else
    REQUIRE(describe(l, address) == l.object + "+" + hex(l.offset));
}

TEST_CASE("the symbolizer gives empty or partial locations for bad input", "[symbolizer]") {
  const std::uint64_t address = reinterpret_cast<std::uint64_t>(&return_address);

  SECTION("empty maps text") {
    Symbolizer sym("");
    REQUIRE(sym.resolve(address) == SourceLocation{});
    REQUIRE(sym.resolve_return_address(0) == SourceLocation{});
    REQUIRE(describe(sym.resolve(address), address) == hex(address));
  }

  SECTION("addresses outside every mapping") {
    Symbolizer sym(self_maps());
    for (std::uint64_t a : {std::uint64_t{0}, std::uint64_t{0x10}, ~std::uint64_t{0}}) {
      REQUIRE(sym.resolve(a) == SourceLocation{});
      REQUIRE(describe(sym.resolve(a), a) == hex(a));
    }
    REQUIRE(sym.resolve_return_address(0) == SourceLocation{});
  }

  SECTION("an object that no longer exists gives object+offset") {
    // A truncated capture and garbage around it must not lose the good line.
    Symbolizer sym(
        "garbage\n"
        "\n"
        "7f0000000000-7f0000002000 r-xp 00000000 08:01 4242 /nonexistent/libgone.so\n"
        "7f0000002000-7f00000");
    const SourceLocation l = sym.resolve(0x7f0000001234);
    REQUIRE(l.object == "/nonexistent/libgone.so");
    REQUIRE(l.offset == 0x1234);
    REQUIRE_FALSE(l.has_line());
    REQUIRE(l.function.empty());
    REQUIRE(describe(l, 0x7f0000001234) == "/nonexistent/libgone.so+0x1234");
    REQUIRE(sym.resolve(0x7f0000002000) == SourceLocation{});
  }

  SECTION("an object that is not ELF gives object+offset") {
    const std::string path = std::string(VCX_SOURCE_DIR) + "/tests/unit/test_symbolizer.cpp";
    Symbolizer sym("7f0000000000-7f0000001000 r--p 00000000 08:01 4243 " + path + "\n");
    const SourceLocation l = sym.resolve(0x7f0000000010);
    REQUIRE(l.object == path);
    REQUIRE(l.offset == 0x10);
    REQUIRE_FALSE(l.has_line());
    REQUIRE(l.function.empty());
  }
}

TEST_CASE("describe prefers file:line, then object+offset, then the address", "[symbolizer]") {
  SourceLocation l;
  REQUIRE(describe(l, 0xdeadbeef) == "0xdeadbeef");
  REQUIRE(describe(l, 0) == "0x0");

  l.object = "/usr/lib/libfoo.so";
  l.offset = 0x1a2b;
  l.function = "foo";
  REQUIRE(describe(l, 0xdeadbeef) == "/usr/lib/libfoo.so+0x1a2b");

  l.file = "src/foo.c";  // a file without a line is no line info
  REQUIRE(describe(l, 0xdeadbeef) == "/usr/lib/libfoo.so+0x1a2b");

  l.line = 42;
  REQUIRE(l.has_line());
  REQUIRE(describe(l, 0xdeadbeef) == "src/foo.c:42");

  l.file.clear();  // a line without a file neither
  REQUIRE_FALSE(l.has_line());
  REQUIRE(describe(l, 0xdeadbeef) == "/usr/lib/libfoo.so+0x1a2b");
}
