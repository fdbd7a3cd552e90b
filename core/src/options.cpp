#include "vcx/options.h"

#include <algorithm>
#include <charconv>

namespace vcx {

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
  if (it == values_.end()) return false;
  std::string v = it->second;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

std::uint64_t Options::number_or(std::string_view key, std::uint64_t fallback) const {
  auto it = values_.find(key);
  if (it == values_.end() || it->second.empty()) return fallback;
  std::uint64_t v = 0;
  const auto& s = it->second;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return fallback;
  return v;
}

}  // namespace vcx
