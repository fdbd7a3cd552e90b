// Plugin options declared as data: checked, completed with defaults and
// described from the declarations alone (core/include/vcx/options.h).
#include <catch2/catch.hpp>
#include <string>

#include "vcx/options.h"

using namespace vcx;

namespace {

const OptionSpec kEngine[] = {
    {"eng.bytes", "64", "how many bytes", OptionKind::Count},
    {"eng.fast", "1", "go fast", OptionKind::Switch},
    {nullptr, nullptr, nullptr},
};
const OptionSpec kModule[] = {
    {"mod.dir", "", "where the results go"},
    {nullptr, nullptr, nullptr},
};
const OptionSpec kNone[] = {{nullptr, nullptr, nullptr}};

const std::vector<DeclaredOptions> kDeclared{{"eng", kEngine}, {"mod", kModule}, {"none", kNone}};

}  // namespace

TEST_CASE("options: defaults fill in what was not given, given values stay", "[options]") {
  Options o;
  o.set("eng.bytes", "128");
  CHECK(apply_option_specs(o, kDeclared).empty());
  CHECK(o.get("eng.bytes") == "128");
  CHECK(o.get("eng.fast") == "1");
  CHECK(o.get("mod.dir") == "");
  CHECK(o.all().size() == 3);
}

TEST_CASE("options: an unknown key is refused with the valid ones", "[options]") {
  Options o;
  o.set("eng.byts", "1");
  const std::string error = apply_option_specs(o, kDeclared);
  CHECK(error == "unknown option 'eng.byts' (the plugins take: eng.bytes, eng.fast, mod.dir)");
  Options p;
  p.set("x", "1");
  CHECK(apply_option_specs(p, {}) == "unknown option 'x' (the plugins take: none)");
}

TEST_CASE("options: values must be of their option's kind", "[options]") {
  for (const char* bad : {"", "-1", "1.5", "x", "99999999999999999999999"}) {
    INFO(bad);
    Options o;
    o.set("eng.bytes", bad);
    CHECK(apply_option_specs(o, kDeclared) ==
          std::string("option eng.bytes takes an unsigned number, not '") + bad + "'");
  }
  for (const char* good : {"0", "1", "true", "False", "yes", "NO", "on", "off"}) {
    INFO(good);
    Options o;
    o.set("eng.fast", good);
    CHECK(apply_option_specs(o, kDeclared).empty());
  }
  Options o;
  o.set("eng.fast", "2");
  CHECK(apply_option_specs(o, kDeclared) == "option eng.fast takes 0 or 1, not '2'");
  Options text;
  text.set("mod.dir", "any text at all, even empty");
  CHECK(apply_option_specs(text, kDeclared).empty());
}

TEST_CASE("options: a plugin reads its value or its declared default", "[options]") {
  const Options none;
  CHECK(option_count(none, kEngine, "eng.bytes") == 64);
  CHECK(option_switch(none, kEngine, "eng.fast"));
  CHECK(option_text(none, kModule, "mod.dir").empty());
  Options o;
  o.set("eng.bytes", "7");
  o.set("eng.fast", "off");
  o.set("mod.dir", "/d");
  CHECK(option_count(o, kEngine, "eng.bytes") == 7);
  CHECK_FALSE(option_switch(o, kEngine, "eng.fast"));
  CHECK(option_text(o, kModule, "mod.dir") == "/d");
  CHECK(option_text(none, kModule, "mod.other").empty());  // not declared: empty
}

TEST_CASE("options: the help text comes from the declarations", "[options]") {
  const std::string help = describe_options(kDeclared);
  CHECK(help ==
        "eng:\n"
        "  eng.bytes=N (default: 64)\n"
        "      how many bytes\n"
        "  eng.fast=0|1 (default: 1)\n"
        "      go fast\n"
        "mod:\n"
        "  mod.dir=TEXT\n"
        "      where the results go\n");
  // Long help wraps within 79 columns.
  const OptionSpec kLong[] = {
      {"l.x", "", "word word word word word word word word word word word word word word word "
                  "word word word word word word word word"},
      {nullptr, nullptr, nullptr}};
  const std::string wrapped = describe_options({{"l", kLong}});
  std::size_t start = 0;
  while (start < wrapped.size()) {
    const std::size_t end = wrapped.find('\n', start);
    CHECK(end - start <= 79);
    start = end + 1;
  }
  CHECK(wrapped.find("      word word") != std::string::npos);
}
