// The per-rank trace file: every clocked call of one rank with its vector
// clock, in a compact binary form (see docs/trace-format.md).
//
// A file is a fixed header followed by frames {u8 tag, varint length,
// payload}. Call names are defined once by a Definition frame; each clocked
// call is a Call frame whose clock is stored as the entries that changed since
// the previous Call frame of the file. The length prefix lets a reader tell a
// frame cut short by a crash from a complete one.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "vcx/exchange.h"
#include "vcx/types.h"

namespace vcx::trace {

// Multi-byte header fields are stored in host order; every supported host is
// little-endian, which is what the format specifies.
static_assert(std::endian::native == std::endian::little,
              "the trace format is little-endian; add byte swapping for this host");

inline constexpr char kMagic[8] = {'V', 'C', 'X', 'T', 'R', 'A', 'C', 'E'};
inline constexpr std::uint32_t kFormatVersion = 2;
inline constexpr const char* kFileSuffix = ".vcxt";

struct FileHeader {
  char magic[8];              // kMagic
  std::uint32_t version;      // kFormatVersion
  std::uint32_t header_size;  // sizeof(FileHeader); frames start here
  std::uint32_t rank;         // world rank the file belongs to
  std::uint32_t world_size;   // N: every clock has N entries
  std::uint64_t reserved;     // 0
};
static_assert(sizeof(FileHeader) == 32);
static_assert(offsetof(FileHeader, version) == 8);
static_assert(offsetof(FileHeader, header_size) == 12);
static_assert(offsetof(FileHeader, rank) == 16);
static_assert(offsetof(FileHeader, world_size) == 20);
static_assert(offsetof(FileHeader, reserved) == 24);
static_assert(std::is_trivially_copyable_v<FileHeader>);

enum class FrameTag : std::uint8_t {
  Definition = 1,  // varint ref, varint model, varint call id, varint len, name
  Call = 2,        // one clocked call, see CallFlags
  Time = 3,        // physical times of one application event (docs/trace-format.md)
  Site = 4,        // varint ref, u64 call-site address
  Group = 5,       // u64 group id, varint count, varint member*
  Sync = 6,        // u8 phase, u64 local time, zigzag offset, varint round trip
};

// First payload byte of a Call frame.
enum CallFlags : std::uint8_t {
  kCallSeqExplicit = 1u << 0,  // varint seq follows; otherwise seq = previous + 1
  kCallHasGroup = 1u << 1,     // u64 group id
  kCallHasQueue = 1u << 2,     // u64 queue word a, varint queue word b
  kCallClockReset = 1u << 3,   // clock delta is against all zeros, not the previous
  kCallEventExplicit = 1u << 4,  // varint event is absolute, not a gap from the previous
  kCallHasMessages = 1u << 5,    // the call's messages follow the clock
  kCallKnownFlags = 0x3f,
};

// Frames longer than this are taken as corruption rather than allocated.
inline constexpr std::uint64_t kMaxFrameLength = 1ull << 30;

// LEB128: 7 bits per byte, low bits first, high bit set on all but the last.
inline constexpr std::size_t kMaxVarintBytes = 10;
// Writes v at p (which must have kMaxVarintBytes room); returns the end.
std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) noexcept;
// Reads a varint from [p, end); returns the byte after it, or nullptr if the
// input ends inside it or it does not fit 64 bits.
const std::uint8_t* get_varint(const std::uint8_t* p, const std::uint8_t* end,
                               std::uint64_t& v) noexcept;

// "rank-<R>.vcxt"
std::string rank_file_name(Rank rank);
// "rank-<R>.maps": the text of the application's /proc/<pid>/maps.
std::string rank_maps_name(Rank rank);

struct RankFile {
  Rank rank;
  std::string path;
};
// The rank files of a trace directory, sorted by rank. False and *error if
// the directory cannot be read; an empty result means it holds no trace.
bool list_rank_files(const std::string& dir, std::vector<RankFile>& out, std::string* error);

class Writer {
 public:
  // The buffer is written out whenever it holds this much, so a crash loses
  // at most about this many bytes of trace.
  static constexpr std::size_t kDefaultFlushBytes = 64 * 1024;

  explicit Writer(std::size_t flush_bytes = kDefaultFlushBytes);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Creates (or truncates) `path` and writes the header.
  bool open(const std::string& path, Rank rank, std::uint32_t world_size, std::string* error);
  // Clock entries beyond world_size are not recorded; missing ones count as 0.
  void append(const ClockedCall& call);
  // The times of an application event (in channel order).
  void append_time(const EventTime& t);
  // A group of ranks, before a call names it.
  void append_group(GroupId id, std::span<const Rank> members);
  // The rank's clock against rank 0's.
  void append_sync(const ClockSync& s);
  void flush();  // hands the buffer to the kernel (no fsync)
  void close();

  bool is_open() const { return fd_ >= 0; }
  // The first write error, if any; after one the writer drops further records.
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  // File offset the next byte will have (written plus buffered).
  std::uint64_t offset() const { return written_ + used_; }

 private:
  std::uint8_t* reserve(std::size_t bytes);
  void commit_frame(FrameTag tag, std::uint8_t* payload_begin, std::uint8_t* payload_end);
  std::uint32_t call_ref(const ClockedCall& call);
  void write_all(const std::uint8_t* p, std::size_t n);

  std::size_t flush_bytes_;
  int fd_ = -1;
  std::string path_;
  std::string error_;
  std::uint32_t world_size_ = 0;
  std::vector<std::uint8_t> buf_;  // size() is capacity; used_ bytes are pending
  std::size_t used_ = 0;
  std::uint64_t written_ = 0;
  std::vector<ClockValue> prev_clock_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t prev_event_ = 0;       // of the last Call frame
  std::uint64_t prev_time_event_ = 0;  // of the last Time frame
  std::uint64_t prev_enter_ = 0;
  std::unordered_map<std::uint64_t, std::uint32_t> sites_;  // address -> ref
  // (model << 16 | call id) -> ref; grows only when a call is first seen.
  std::unordered_map<std::uint32_t, std::uint32_t> refs_;
};

struct Record {
  std::uint64_t seq = 0;
  std::uint64_t event = 0;      // the channel event of the call (EventHeader::seq)
  // Physical times (ns of the application's clock) and call site; 0 when
  // the trace has none, leave_ns also when the run ended before it was known.
  std::uint64_t enter_ns = 0;
  std::uint64_t leave_ns = 0;
  std::uint64_t call_site = 0;
  std::string call;
  std::uint8_t model = 0;
  std::uint16_t call_id = 0;
  std::vector<Rank> peers;
  GroupId group{};
  QueueId queue{};
  std::vector<ClockValue> clock;  // world_size entries
  std::vector<MessageEnd> messages;
};

class Reader {
 public:
  Reader() = default;
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  bool open(const std::string& path, std::string* error);
  Rank rank() const { return Rank{header_.rank}; }
  std::uint32_t world_size() const { return header_.world_size; }

  // The next call, with its times once the frame that gives its return time
  // was read. False at the end, at a truncated tail, or at a corrupt frame
  // (error()).
  bool next(Record& out);
  // Whether the trace has physical times (some Time frame was read).
  bool timed() const { return timed_; }
  // The groups defined so far (every group a call returned by next() names).
  const std::unordered_map<std::uint64_t, std::vector<Rank>>& groups() const { return groups_; }
  // The rank's clock offsets read so far (the end one comes last in a file).
  const std::vector<ClockSync>& syncs() const { return syncs_; }
  // True once a partial frame was found at the end of the file.
  bool truncated() const { return truncated_; }
  // Non-empty if reading stopped at a frame that is complete but malformed,
  // or at a read error.
  const std::string& error() const { return error_; }

 private:
  struct Name {
    std::string text;
    std::uint8_t model = 0;
    std::uint16_t call = 0;
  };
  // Makes `n` bytes available from pos_; false if the file ends first.
  bool fill(std::size_t n);
  bool corrupt(const std::string& why);
  bool read_failed();
  bool parse_definition(const std::uint8_t* p, const std::uint8_t* end);
  bool parse_call(const std::uint8_t* p, const std::uint8_t* end, Record& out);
  bool parse_time(const std::uint8_t* p, const std::uint8_t* end);
  bool parse_site(const std::uint8_t* p, const std::uint8_t* end);
  bool parse_group(const std::uint8_t* p, const std::uint8_t* end);
  bool parse_sync(const std::uint8_t* p, const std::uint8_t* end);
  // Reads one frame into the pending state; false at the end or an error.
  bool read_frame();
  // Whether the oldest pending call has all the times it will get.
  bool front_ready() const;
  void deliver(Record& out);

  struct Times {
    std::uint64_t event, enter, leave, site;
  };

  std::FILE* file_ = nullptr;
  std::string path_;
  FileHeader header_{};
  std::vector<std::uint8_t> buf_;
  std::size_t pos_ = 0, end_ = 0;
  std::uint64_t frame_offset_ = 0;  // file offset of buf_[pos_]
  bool eof_ = false;
  bool truncated_ = false;
  bool done_ = false;
  std::string error_;
  std::vector<Name> names_;
  std::vector<ClockValue> clock_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t prev_event_ = 0;
  std::uint64_t prev_time_event_ = 0;
  std::uint64_t prev_enter_ = 0;
  std::vector<std::uint64_t> sites_;
  std::unordered_map<std::uint64_t, std::vector<Rank>> groups_;
  std::vector<ClockSync> syncs_;
  bool timed_ = false;
  std::deque<Times> times_;     // of events not yet delivered, in event order
  std::deque<Record> pending_;  // calls waiting for their return time
  Record scratch_;
};

}  // namespace vcx::trace
