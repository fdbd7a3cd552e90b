#include "vcx/session_rendezvous.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "vcx/atomic_file.h"
#include "vcx/session_layout.h"

namespace vcx {
namespace {

using Clock = std::chrono::steady_clock;

bool publish(const std::string& path, const std::string& text) {
  return write_file_atomically(path, text, nullptr);
}

// Waits for `path` to exist and returns its lines; nullopt at the deadline.
std::optional<std::vector<std::string>> await_lines(const std::string& path,
                                                    Clock::time_point start,
                                                    Clock::time_point deadline) {
  for (;;) {
    std::ifstream in(path);
    if (in) {
      std::vector<std::string> lines;
      for (std::string line; std::getline(in, line);) lines.push_back(line);
      return lines;
    }
    const auto now = Clock::now();
    if (now >= deadline) return std::nullopt;
    // The others start at about the same time: look often at first.
    std::this_thread::sleep_for(now - start < std::chrono::milliseconds(500)
                                    ? std::chrono::microseconds(500)
                                    : std::chrono::microseconds(10'000));
  }
}

std::string seconds(std::chrono::milliseconds t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(t.count()) / 1000.0);
  return buf;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

std::optional<Rendezvous> rendezvous_in_session(const std::string& dir, std::uint32_t rank,
                                                std::uint32_t size, bool ok,
                                                const std::string& text,
                                                std::chrono::milliseconds timeout,
                                                std::string* error) {
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  const std::string mine = session::tool_start(dir, rank);
  if (!publish(mine, std::string(ok ? "ok" : "failed") + "\n" + one_line(text) + "\n")) {
    if (error) *error = "cannot write " + mine;
    return std::nullopt;
  }
  const std::string all = session::file(dir, session::kToolsStarted);
  if (rank == 0) {
    Rendezvous r;
    r.all_ok = true;
    for (std::uint32_t t = 0; t < size; ++t) {
      const std::string path = session::tool_start(dir, t);
      const auto lines = await_lines(path, start, deadline);
      if (!lines) {
        if (error)
          *error = "tool " + std::to_string(t) + " did not start within " + seconds(timeout);
        return std::nullopt;
      }
      const bool its_ok = !lines->empty() && (*lines)[0] == "ok";
      const std::string its_text = lines->size() > 1 ? (*lines)[1] : "";
      if (!its_ok && r.all_ok) {
        r.all_ok = false;
        r.failure = "rank " + std::to_string(t) + ": " + its_text;
      }
      r.endpoints.push_back(its_ok ? its_text : "");
    }
    std::string out = r.all_ok ? "ok\n" : "failed " + r.failure + "\n";
    for (const std::string& e : r.endpoints) out += e + "\n";
    if (!publish(all, out)) {
      if (error) *error = "cannot write " + all;
      return std::nullopt;
    }
    return r;
  }
  const auto lines = await_lines(all, start, deadline);
  if (!lines || lines->empty()) {
    if (error)
      *error = "tool 0 did not gather the tools within " + seconds(timeout);
    return std::nullopt;
  }
  Rendezvous r;
  r.all_ok = (*lines)[0] == "ok";
  if (!r.all_ok && (*lines)[0].rfind("failed ", 0) == 0) r.failure = (*lines)[0].substr(7);
  r.endpoints.assign(lines->begin() + 1, lines->end());
  if (r.endpoints.size() != size) {
    if (error) *error = all + " names " + std::to_string(r.endpoints.size()) + " tools, not " +
                        std::to_string(size);
    return std::nullopt;
  }
  return r;
}

}  // namespace vcx
