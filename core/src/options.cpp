#include "vcx/options.h"

#include <algorithm>
#include <charconv>

namespace vcx {
namespace {

std::string lower(std::string v) {
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return v;
}

std::optional<std::uint64_t> parse_count(std::string_view s) {
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bool is_true(const std::string& v) {
  const std::string l = lower(v);
  return l == "1" || l == "true" || l == "yes" || l == "on";
}

bool is_switch(const std::string& v) {
  const std::string l = lower(v);
  return l == "0" || l == "1" || l == "true" || l == "false" || l == "yes" || l == "no" ||
         l == "on" || l == "off";
}

const char* kind_word(OptionKind k) {
  switch (k) {
    case OptionKind::Count: return "N";
    case OptionKind::Switch: return "0|1";
    case OptionKind::Text: break;
  }
  return "TEXT";
}

const OptionSpec* find_spec(const OptionSpec* specs, std::string_view key) {
  for (const OptionSpec* s = specs; s && s->name; ++s)
    if (key == s->name) return s;
  return nullptr;
}

// Words of `text` on lines of at most `width` columns, each after `indent`.
std::string wrap(std::string_view text, std::size_t indent, std::size_t width) {
  std::string out, line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    const std::string_view word = text.substr(pos, end - pos);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
    pos = end + 1;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

}  // namespace

std::optional<std::string> Options::get(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Options::get_or(std::string_view key, std::string_view fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? std::string(fallback) : it->second;
}

bool Options::flag(std::string_view key) const {
  auto it = values_.find(key);
  return it != values_.end() && is_true(it->second);
}

std::uint64_t Options::number_or(std::string_view key, std::uint64_t fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  return parse_count(it->second).value_or(fallback);
}

std::string apply_option_specs(Options& given, const std::vector<DeclaredOptions>& declared) {
  for (const auto& [key, value] : given.all()) {
    const OptionSpec* spec = nullptr;
    for (const DeclaredOptions& d : declared)
      if ((spec = find_spec(d.specs, key))) break;
    if (!spec) {
      std::string valid;
      for (const DeclaredOptions& d : declared)
        for (const OptionSpec* s = d.specs; s && s->name; ++s)
          valid += std::string(valid.empty() ? "" : ", ") + s->name;
      return "unknown option '" + key + "' (the plugins take: " +
             (valid.empty() ? "none" : valid) + ")";
    }
    if (spec->kind == OptionKind::Count && !parse_count(value))
      return "option " + key + " takes an unsigned number, not '" + value + "'";
    if (spec->kind == OptionKind::Switch && !is_switch(value))
      return "option " + key + " takes 0 or 1, not '" + value + "'";
  }
  for (const DeclaredOptions& d : declared)
    for (const OptionSpec* s = d.specs; s && s->name; ++s)
      if (!given.get(s->name)) given.set(s->name, s->default_value ? s->default_value : "");
  return {};
}

std::string describe_options(const std::vector<DeclaredOptions>& declared) {
  std::string out;
  for (const DeclaredOptions& d : declared) {
    if (!d.specs || !d.specs->name) continue;
    out += d.plugin + ":\n";
    for (const OptionSpec* s = d.specs; s->name; ++s) {
      out += "  " + std::string(s->name) + "=" + kind_word(s->kind);
      if (s->default_value && *s->default_value)
        out += std::string(" (default: ") + s->default_value + ")";
      out += "\n" + wrap(s->help ? s->help : "", 6, 79);
    }
  }
  return out;
}

std::string option_text(const Options& given, const OptionSpec* specs, std::string_view key) {
  if (auto v = given.get(key)) return *v;
  const OptionSpec* s = find_spec(specs, key);
  return s && s->default_value ? s->default_value : "";
}

bool option_switch(const Options& given, const OptionSpec* specs, std::string_view key) {
  return is_true(option_text(given, specs, key));
}

std::uint64_t option_count(const Options& given, const OptionSpec* specs, std::string_view key) {
  const OptionSpec* s = find_spec(specs, key);
  const std::uint64_t fallback =
      s && s->default_value ? parse_count(s->default_value).value_or(0) : 0;
  return given.number_or(key, fallback);
}

}  // namespace vcx
