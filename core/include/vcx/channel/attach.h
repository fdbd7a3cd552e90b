// How an application process attaches to its tool process. The tool decides
// the channel and publishes one of two things in the session directory:
//
//  * shm: its Unix socket `tool-<rank>.sock`. The application connects, says
//    hello, and receives the shared-memory block as a file descriptor (memfd,
//    never a name in /dev/shm). The socket stays open for the whole run: a
//    byte on it wakes a sleeping tool, and its end-of-file tells each side
//    that the other is gone.
//  * tcp: the file `tool-<rank>.tcp` holding its endpoint "host:port". The
//    application connects, says the same hello, and the connection then
//    carries the events (tcp_channel.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "vcx/channel/shared_channel.h"

namespace vcx::channel {

inline constexpr std::uint64_t kAttachMagic = 0x3130'4843'5441'5856ULL;  // "VXATCH01"
inline constexpr std::uint32_t kAttachVersion = 4;  // 4: events may carry their times
inline constexpr std::size_t kTokenBytes = 64;

struct AttachHello {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t world_rank;
  std::uint32_t world_size;
  std::int32_t pid;
  std::uint16_t model;       // vcx::Model of the interceptor
  std::uint16_t reserved[3];
  char token[kTokenBytes];   // the session's secret, NUL-padded
};
static_assert(std::is_trivially_copyable_v<AttachHello>);
static_assert(sizeof(AttachHello) == 96);

enum class AttachStatus : std::uint32_t {
  Ok = 0,
  BadVersion = 1,
  BadToken = 2,
  SizeMismatch = 3,
  RankMismatch = 4,
  AlreadyAttached = 5,
  Internal = 6,
};

struct AttachReply {
  std::uint64_t magic;
  AttachStatus status;
  std::uint32_t mode_flags;       // ChannelModeFlags
  std::uint64_t channel_bytes;    // shm: size of the mapping passed with the reply;
                                  // tcp: capacity of the ring the stream mirrors
  std::uint32_t app_spin_ns;      // how long the application polls for an answer
                                  // before it sleeps
  std::uint32_t reserved;
  char message[224];              // human-readable reason when status != Ok
};
static_assert(std::is_trivially_copyable_v<AttachReply>);
static_assert(sizeof(AttachReply) == 256);

const char* attach_status_name(AttachStatus s);

enum class ChannelKind : std::uint8_t { Shm = 0, Tcp = 1 };

// What the tool publishes in the session directory, per rank.
std::string tool_socket_path(const std::string& session_dir, std::uint32_t rank);
std::string tool_endpoint_path(const std::string& session_dir, std::uint32_t rank);

// True if `token` (NUL-padded, kTokenBytes) equals `expected`, compared in
// constant time.
bool token_matches(const char (&token)[kTokenBytes], const std::string& expected);

// ---- application side -------------------------------------------------------

struct Attachment {
  ChannelKind kind = ChannelKind::Shm;
  int socket_fd = -1;                 // shm: the Unix socket; tcp: the connection
  std::uint32_t mode_flags = 0;       // ChannelModeFlags, from the tool's reply
  std::uint32_t app_spin_ns = 0;      // from the tool's reply
  ChannelControl* control = nullptr;  // shm only
  std::size_t mapped_bytes = 0;       // shm only
  std::uint64_t ring_capacity = 0;    // tcp only: the ring the stream mirrors
};

// Waits (up to timeout_ms) until the tool of `hello.world_rank` has
// published its socket or its endpoint in `session_dir`, then attaches
// through whichever it is. On failure returns false and fills `error`,
// naming what was tried.
bool attach_in_session(const std::string& session_dir, const AttachHello& hello, int timeout_ms,
                       Attachment* out, std::string* error);
// Connects (retrying until timeout_ms while the socket does not exist yet),
// sends hello, maps the channel. On failure returns false and fills `error`.
bool attach_to_tool(const std::string& socket_path, const AttachHello& hello, int timeout_ms,
                    Attachment* out, std::string* error);
// The same over TCP to `endpoint` ("host:port", retrying while refused).
bool attach_to_tool_tcp(const std::string& endpoint, const AttachHello& hello, int timeout_ms,
                        Attachment* out, std::string* error);
void detach(Attachment* a);

// ---- tool side --------------------------------------------------------------

// A freshly created shared block (memfd) mapped into the tool.
struct ChannelBlock {
  int memfd = -1;
  ChannelControl* control = nullptr;
  std::size_t bytes = 0;
};
bool create_channel_block(std::size_t ring_capacity, std::uint32_t mode_flags, ChannelBlock* out,
                          std::string* error);
void destroy_channel_block(ChannelBlock* b);

// Reads exactly `len` bytes from a blocking socket; false on EOF or error.
bool read_full(int fd, void* buf, std::size_t len);
// Writes all of `buf` to a blocking socket (no SIGPIPE); false on error.
bool write_full(int fd, const void* buf, std::size_t len);
// Sends the reply, with the block's descriptor attached when fd >= 0.
bool send_attach_reply(int socket_fd, const AttachReply& reply, int fd);

}  // namespace vcx::channel
