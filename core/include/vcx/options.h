// Plugin and tool options: each plugin describes its options (name, default,
// help) once; the same table drives parsing, defaults and --help.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace vcx {

struct OptionSpec {
  const char* name;           // "trace.dir"
  const char* default_value;  // as text; "" when unset by default
  const char* help;
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

}  // namespace vcx
