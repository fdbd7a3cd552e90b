#include "launcher/session.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>
#include <vector>

#include "vcx/session_layout.h"

namespace vcx::launcher {
namespace fs = std::filesystem;
namespace {

// Socket paths inside the session must fit in sun_path (108 bytes) with
// room for the directory's own name and a socket name.
constexpr std::size_t kMaxParentLength = 64;

bool read_random(unsigned char* buf, std::size_t len) {
  std::size_t got = 0;
  while (got < len) {
    const ssize_t n = ::getrandom(buf + got, len - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  if (got == len) return true;
  // Kernels without getrandom still have the device.
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  got = 0;
  while (got < len) {
    const ssize_t n = ::read(fd, buf + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return got == len;
}

}  // namespace

std::string random_token() {
  unsigned char bytes[16];
  if (!read_random(bytes, sizeof bytes))
    throw std::runtime_error(std::string("cannot read random bytes for the session token: ") +
                             std::strerror(errno));
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  token.reserve(2 * sizeof bytes);
  for (unsigned char b : bytes) {
    token.push_back(kHex[b >> 4]);
    token.push_back(kHex[b & 0xf]);
  }
  return token;
}

std::string session_parent(const std::optional<std::string>& tmpdir) {
  if (!tmpdir || tmpdir->empty() || (*tmpdir)[0] != '/') return "/tmp";
  std::string p = *tmpdir;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  if (p.size() > kMaxParentLength) return "/tmp";
  return p;
}

Session Session::create(const std::string& parent) {
  Session s;
  s.token_ = random_token();
  std::string pattern = (parent == "/" ? "" : parent) + "/vcx-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)  // mkdtemp makes it 0700
    throw std::runtime_error("cannot create a session directory in " + parent + ": " +
                             std::strerror(errno));
  s.dir_ = buf.data();
  return s;
}

Session::Session(Session&& other) noexcept
    : dir_(std::move(other.dir_)), token_(std::move(other.token_)), keep_(other.keep_) {
  other.dir_.clear();
}

Session::~Session() {
  if (!keep_) remove();
}

bool Session::ready() const {
  return ::access(session::file(dir_, session::kReady).c_str(), F_OK) == 0;
}

std::string Session::remove() {
  if (dir_.empty()) return {};
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (ec) return "cannot remove the session directory " + dir_ + ": " + ec.message();
  dir_.clear();
  return {};
}

std::string prepare_output_dir(const std::string& dir) {
  std::error_code ec;
  const fs::path abs = fs::absolute(dir, ec).lexically_normal();
  if (ec) throw std::runtime_error("cannot make " + dir + " absolute: " + ec.message());
  std::string p = abs.string();
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  // One level at a time so that each new directory gets 0700 (the trace may
  // reveal what the program does).
  fs::path built;
  for (const auto& part : fs::path(p)) {
    built /= part;
    if (::mkdir(built.c_str(), 0700) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create " + built.string() + ": " + std::strerror(errno));
  }
  if (!fs::is_directory(p, ec)) throw std::runtime_error(p + " exists and is not a directory");
  if (::access(p.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error("cannot write to " + p + ": " + std::strerror(errno));
  return p;
}

std::size_t remove_trace_files(const std::string& dir) {
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // rank-<R>.vcxt, as the trace module names its files.
    const std::string prefix = "rank-", suffix = ".vcxt";
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::unlink(entry.path().c_str()) != 0)
      throw std::runtime_error("cannot remove " + entry.path().string() +
                               " of an earlier trace: " + std::strerror(errno));
    ++removed;
  }
  return removed;
}

}  // namespace vcx::launcher
