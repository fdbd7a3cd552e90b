// The settings of delay injection (VCX_CHAOS_DELAY_US, VCX_CHAOS_SEED),
// read by the tools and checked by vcx-run before anything starts, so that a
// bad value is a usage error. Header-only: vcx-run does not link the core.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace vcx {

// Seed used when VCX_CHAOS_SEED is not set; printed either way, so that a
// failing run can be repeated.
inline constexpr std::uint64_t kDefaultChaosSeed = 1;
// Longest delay accepted: more is a typo, not a test.
inline constexpr std::uint64_t kMaxChaosDelayUs = 1'000'000;

struct ChaosSettings {
  std::uint64_t max_delay_us = 0;  // 0: no delay injection
  std::uint64_t seed = kDefaultChaosSeed;
};

namespace detail {

// Decimal digits only (no sign, no spaces, no suffix), within u64.
inline std::optional<std::uint64_t> parse_chaos_decimal(const char* text) {
  const char* end = text + std::strlen(text);
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || text == end || *text < '0' || *text > '9')
    return std::nullopt;
  return value;
}

}  // namespace detail

// Reads the values of VCX_CHAOS_DELAY_US and VCX_CHAOS_SEED (null or empty:
// unset). Returns what is wrong, for the user, when a value is bad.
inline std::optional<std::string> parse_chaos_settings(const char* delay_us, const char* seed,
                                                ChaosSettings* out) {
  *out = ChaosSettings{};
  if (delay_us && *delay_us) {
    const auto v = detail::parse_chaos_decimal(delay_us);
    if (!v || *v > kMaxChaosDelayUs)
      return "VCX_CHAOS_DELAY_US must be a whole number of microseconds from 0 to " +
             std::to_string(kMaxChaosDelayUs) + ", not '" + delay_us +
             "'; unset it to run without delay injection";
    out->max_delay_us = *v;
  }
  if (seed && *seed) {
    const auto v = detail::parse_chaos_decimal(seed);
    if (!v)
      return std::string("VCX_CHAOS_SEED must be a whole number from 0 to 2^64-1, not '") +
             seed + "'";
    out->seed = *v;
  }
  return std::nullopt;
}

}  // namespace vcx
