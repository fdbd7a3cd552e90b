// Plugin and tool options: each plugin declares its options as data (name,
// default, kind, help) in its descriptor, once. The tool process checks what
// it was given against the declarations of the plugins it loaded and fills
// in the defaults (apply_option_specs); the same tables make the help text
// (describe_options: vcx-toolproc --help, vcx-run --help-plugins).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vcx {

enum class OptionKind : std::uint32_t {
  Text = 0,    // any text
  Count = 1,   // an unsigned decimal number
  Switch = 2,  // 0 or 1 (true/false, yes/no, on/off are taken too)
};

struct OptionSpec {
  const char* name;           // "trace.dir": the plugin's name, a dot, the option
  const char* default_value;  // as text; "" when unset by default
  const char* help;
  OptionKind kind = OptionKind::Text;
};

class Options {
 public:
  void set(std::string key, std::string value) { values_[std::move(key)] = std::move(value); }
  std::optional<std::string> get(std::string_view key) const;
  std::string get_or(std::string_view key, std::string_view fallback) const;
  bool flag(std::string_view key) const;  // "1", "true", "yes", "on"
  std::uint64_t number_or(std::string_view key, std::uint64_t fallback) const;
  const std::map<std::string, std::string, std::less<>>& all() const { return values_; }

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

// One plugin's declared options (its descriptor's table, ending in an entry
// whose name is null).
struct DeclaredOptions {
  std::string plugin;
  const OptionSpec* specs = nullptr;
};

// Checks every value in `given` against the declarations and fills in the
// default of every declared option not given. A key nobody declares, or a
// value not of its option's kind, is an error: the returned text says which
// and lists the valid keys. "" when all is well.
std::string apply_option_specs(Options& given, const std::vector<DeclaredOptions>& declared);

// The options of these plugins, for --help: a heading per plugin, then each
// option as "  name=<kind> (default: ...)" and its help, wrapped.
std::string describe_options(const std::vector<DeclaredOptions>& declared);

// The value of `key`, else the default its declaration gives. A plugin reads
// its options through these, so that the default lives in its table only
// (the tool process fills defaults in; a host that did not, such as a unit
// test's, gets the same values).
std::string option_text(const Options& given, const OptionSpec* specs, std::string_view key);
std::uint64_t option_count(const Options& given, const OptionSpec* specs, std::string_view key);
bool option_switch(const Options& given, const OptionSpec* specs, std::string_view key);

}  // namespace vcx
