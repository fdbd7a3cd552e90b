#include "vcx/intercept/call_timing.h"

#include <sys/stat.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

namespace vcx::intercept {
namespace {

// Test skew of this rank (VCX_TEST_CLOCK_SKEW); zero in real runs.
std::int64_t g_offset_ns = 0;
double g_drift = 0;  // relative: ns per ns
std::uint64_t g_start_ns = 0;

__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_entered = 0;

std::uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// One "R:offset_ns:drift_ppm" item at p; advances p past it.
bool parse_item(const char*& p, long& rank, long long& offset, double& drift) {
  char* end = nullptr;
  errno = 0;
  rank = std::strtol(p, &end, 10);
  if (end == p || *end != ':' || rank < 0) return false;
  p = end + 1;
  offset = std::strtoll(p, &end, 10);
  if (end == p || *end != ':') return false;
  p = end + 1;
  drift = std::strtod(p, &end);
  if (end == p || errno != 0 || (*end != ',' && *end != '\0')) return false;
  p = *end == ',' ? end + 1 : end;
  return true;
}

}  // namespace

std::atomic<bool> g_trace_clock_on{false};

std::uint64_t trace_clock_ns() {
  const std::uint64_t t = monotonic_ns();
  if (g_offset_ns == 0 && g_drift == 0) return t;
  const double drifted = g_drift * static_cast<double>(t - g_start_ns);
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(t) + g_offset_ns +
                                    static_cast<std::int64_t>(drifted));
}

bool start_trace_clock(int world_rank, const char** error) {
  g_start_ns = monotonic_ns();
  if (const char* v = std::getenv("VCX_TEST_CLOCK_SKEW"); v && *v) {
    for (const char* p = v; *p;) {
      long rank = 0;
      long long offset = 0;
      double drift = 0;
      if (!parse_item(p, rank, offset, drift)) {
        *error = "VCX_TEST_CLOCK_SKEW must be R:offset_ns:drift_ppm items separated by commas";
        return false;
      }
      if (rank != world_rank) continue;
      g_offset_ns = offset;
      g_drift = drift * 1e-6;
    }
  }
  g_trace_clock_on.store(true, std::memory_order_release);
  return true;
}

std::uint64_t trace_clock_domain(int world_rank) {
  // FNV-1a over the boot's id (CLOCK_MONOTONIC counts from the boot) and the
  // time namespace (which may offset CLOCK_MONOTONIC).
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  std::string boot;
  std::getline(std::ifstream("/proc/sys/kernel/random/boot_id"), boot);
  if (boot.empty()) return 0x8000'0000'0000'0000ull | static_cast<std::uint64_t>(world_rank);
  for (char c : boot) mix(static_cast<unsigned char>(c));
  struct stat ns {};
  if (stat("/proc/self/ns/time", &ns) == 0) mix(ns.st_ino);
  // A test-skewed clock is a clock of its own.
  if (g_offset_ns != 0 || g_drift != 0) mix(static_cast<std::uint64_t>(world_rank) + 1);
  return h;
}

CallEntry::CallEntry() noexcept {
  if (!trace_clock_on() || t_entered != 0) return;
  t_entered = trace_clock_ns();
  outermost_ = true;
}

CallEntry::~CallEntry() {
  if (outermost_) t_entered = 0;
}

std::uint64_t call_enter_ns() { return t_entered != 0 ? t_entered : trace_clock_ns(); }

}  // namespace vcx::intercept
