#include "launcher/console.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <string_view>

namespace vcx::launcher {

using std::chrono::milliseconds;

// One write per line so that messages do not interleave with the ranks' output.
void write_line(int fd, const std::string& text) {
  const std::string line = text + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

namespace {

// Whether the progress line is on the terminal (it is cleared before any
// other message).
bool g_progress_shown = false;

}  // namespace

void clear_progress() {
  if (!g_progress_shown) return;
  const char clear[] = "\r\033[K";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, clear, sizeof clear - 1);
  g_progress_shown = false;
}

void write_progress_line(const std::string& text) {
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
  g_progress_shown = true;
}

void say(const std::string& text) {
  clear_progress();
  write_line(STDERR_FILENO, "vcx: " + text);
}

std::string count_text(double v) {
  char buf[32];
  if (v >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f G ", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f M ", v / 1e6);
  else if (v >= 1e4)
    std::snprintf(buf, sizeof buf, "%.1f k ", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f ", v);
  return buf;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string shell_quote(const std::vector<std::string>& words) {
  std::vector<std::string> quoted;
  for (const auto& w : words) {
    const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](unsigned char c) {
      return std::isalnum(c) ||
             std::string_view("/._-=,:+@%").find(static_cast<char>(c)) != std::string_view::npos;
    });
    if (plain) {
      quoted.push_back(w);
      continue;
    }
    std::string q = "'";
    for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted.push_back(q + "'");
  }
  return join(quoted, " ");
}

std::string absolute_path(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) return path;
  return std::string(cwd) + "/" + path;
}

std::string seconds_text(milliseconds ms) {
  char buf[32];
  if (ms.count() % 1000 == 0)
    std::snprintf(buf, sizeof buf, "%lld s", static_cast<long long>(ms.count() / 1000));
  else
    std::snprintf(buf, sizeof buf, "%.3g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

}  // namespace vcx::launcher
