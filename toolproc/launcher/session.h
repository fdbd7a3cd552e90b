// The session: a private directory where the tools put their sockets, the
// ready mark and their statistics, and a secret token that only the
// launcher's two jobs know.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace vcx::launcher {

// 32 lowercase hex characters from the kernel's random source.
// Throws std::runtime_error when no randomness is available.
std::string random_token();

// Where session directories go: TMPDIR when it is set, absolute and short
// enough for the Unix socket paths inside the session, else /tmp.
std::string session_parent(const std::optional<std::string>& tmpdir);

class Session {
 public:
  // Creates "<parent>/vcx-XXXXXX" with mode 0700 and a fresh token.
  // Throws std::runtime_error naming the directory on failure.
  static Session create(const std::string& parent);

  Session(Session&& other) noexcept;
  Session& operator=(Session&&) = delete;
  Session(const Session&) = delete;
  // Removes the directory unless keep() was called.
  ~Session();

  const std::string& dir() const { return dir_; }
  const std::string& token() const { return token_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // Tool rank 0 creates "ready" once every tool listens.
  bool ready() const;
  void keep() { keep_ = true; }
  // Removes the directory and everything in it; the error text, or "".
  std::string remove();

 private:
  Session() = default;
  std::string dir_;
  std::string token_;
  bool keep_ = false;
};

// Makes `dir` absolute and creates it with its parents (new directories get
// mode 0700). Returns the absolute path; throws std::runtime_error on failure.
std::string prepare_output_dir(const std::string& dir);
// Removes the rank files (rank-<R>.vcxt) an earlier trace left in `dir`, so
// that a run with fewer ranks leaves no stale ones; returns how many.
std::size_t remove_trace_files(const std::string& dir);

}  // namespace vcx::launcher
