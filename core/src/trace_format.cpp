#include "vcx/trace_format.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

namespace vcx::trace {
namespace {

// A frame is tag + varint length; lengths never need more than 5 bytes since
// they are capped at kMaxFrameLength.
constexpr std::size_t kFrameHeadRoom = 1 + 5;
static_assert(kMaxFrameLength < (1ull << 35));

std::string errno_text() { return std::strerror(errno); }

void put_u64(std::uint8_t*& p, std::uint64_t v) {
  std::memcpy(p, &v, 8);
  p += 8;
}

bool get_u64(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& v) {
  if (end - p < 8) return false;
  std::memcpy(&v, p, 8);
  p += 8;
  return true;
}

// Signed differences as unsigned varints: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ...
std::uint64_t zigzag(std::uint64_t from, std::uint64_t to) {
  const auto d = static_cast<std::int64_t>(to - from);
  return (static_cast<std::uint64_t>(d) << 1) ^ static_cast<std::uint64_t>(d >> 63);
}
std::uint64_t unzigzag(std::uint64_t base, std::uint64_t z) {
  return base + ((z >> 1) ^ (~(z & 1) + 1));
}

}  // namespace

std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}

const std::uint8_t* get_varint(const std::uint8_t* p, const std::uint8_t* end,
                               std::uint64_t& v) noexcept {
  std::uint64_t result = 0;
  for (unsigned shift = 0; p < end; shift += 7) {
    const std::uint8_t b = *p++;
    // The tenth byte may carry only the top bit of a 64-bit value.
    if (shift == 63 && b > 1) return nullptr;
    result |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      v = result;
      return p;
    }
    if (shift == 63) return nullptr;
  }
  return nullptr;
}

std::string rank_file_name(Rank rank) {
  return "rank-" + std::to_string(rank.value) + kFileSuffix;
}

std::string rank_maps_name(Rank rank) { return "rank-" + std::to_string(rank.value) + ".maps"; }

bool list_rank_files(const std::string& dir, std::vector<RankFile>& out, std::string* error) {
  namespace fs = std::filesystem;
  out.clear();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (error) *error = dir + (fs::exists(dir, ec) ? ": not a directory" : ": no such directory");
    return false;
  }
  fs::directory_iterator it(dir, ec);
  if (ec) {
    if (error) *error = "cannot read " + dir + ": " + ec.message();
    return false;
  }
  const std::string prefix = "rank-";
  const std::string suffix = kFileSuffix;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const std::string f = it->path().filename().string();
    if (f.size() <= prefix.size() + suffix.size() || f.rfind(prefix, 0) != 0 ||
        f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const char* b = f.data() + prefix.size();
    const char* e = f.data() + f.size() - suffix.size();
    // Only canonical numbers, so that "rank-01" cannot shadow "rank-1".
    if (*b == '0' && e - b > 1) continue;
    std::uint32_t r = 0;
    auto [q, rc] = std::from_chars(b, e, r);
    if (rc != std::errc() || q != e) continue;
    out.push_back({Rank{r}, it->path().string()});
  }
  if (ec) {
    if (error) *error = "cannot read " + dir + ": " + ec.message();
    return false;
  }
  std::sort(out.begin(), out.end(),
            [](const RankFile& a, const RankFile& b) { return a.rank < b.rank; });
  return true;
}

// ---------------------------------------------------------------- Writer

Writer::Writer(std::size_t flush_bytes) : flush_bytes_(std::max<std::size_t>(flush_bytes, 1)) {}

Writer::~Writer() { close(); }

bool Writer::open(const std::string& path, Rank rank, std::uint32_t world_size,
                  std::string* error) {
  close();
  if (world_size == 0 || rank.value >= world_size) {
    if (error) *error = "trace: rank " + std::to_string(rank.value) + " is outside a world of " +
                        std::to_string(world_size);
    return false;
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    if (error) *error = "cannot create trace file " + path + ": " + errno_text();
    return false;
  }
  path_ = path;
  error_.clear();
  world_size_ = world_size;
  buf_.resize(flush_bytes_ + 4096);
  used_ = 0;
  written_ = 0;
  prev_clock_.assign(world_size, 0);
  next_seq_ = 0;
  prev_event_ = prev_time_event_ = prev_enter_ = 0;
  refs_.clear();
  sites_.clear();

  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof h.magic);
  h.version = kFormatVersion;
  h.header_size = sizeof(FileHeader);
  h.rank = rank.value;
  h.world_size = world_size;
  std::memcpy(reserve(sizeof h), &h, sizeof h);
  used_ += sizeof h;
  // On disk at once: a file that exists is always identifiable as a trace.
  flush();
  if (failed()) {
    if (error) *error = error_;
    close();
    return false;
  }
  return true;
}

std::uint8_t* Writer::reserve(std::size_t bytes) {
  if (used_ + bytes > buf_.size()) buf_.resize(std::max(buf_.size() * 2, used_ + bytes));
  return buf_.data() + used_;
}

void Writer::commit_frame(FrameTag tag, std::uint8_t* payload_begin, std::uint8_t* payload_end) {
  // The payload was encoded kFrameHeadRoom bytes after the frame start; close
  // the gap left by a length that needed fewer bytes.
  const std::size_t len = static_cast<std::size_t>(payload_end - payload_begin);
  std::uint8_t* frame = buf_.data() + used_;
  frame[0] = static_cast<std::uint8_t>(tag);
  std::uint8_t* after_len = put_varint(frame + 1, len);
  if (after_len != payload_begin) std::memmove(after_len, payload_begin, len);
  used_ += static_cast<std::size_t>(after_len - frame) + len;
  if (used_ >= flush_bytes_) flush();
}

std::uint32_t Writer::call_ref(const ClockedCall& call) {
  const std::uint32_t key =
      (static_cast<std::uint32_t>(call.model) << 16) | static_cast<std::uint32_t>(call.call);
  if (auto it = refs_.find(key); it != refs_.end()) return it->second;
  const auto ref = static_cast<std::uint32_t>(refs_.size());
  refs_.emplace(key, ref);

  const char* name = call.call_name ? call.call_name : "";
  const std::size_t name_len = std::strlen(name);
  std::uint8_t* payload = reserve(kFrameHeadRoom + 4 * kMaxVarintBytes + name_len) + kFrameHeadRoom;
  std::uint8_t* p = payload;
  p = put_varint(p, ref);
  p = put_varint(p, static_cast<std::uint64_t>(call.model));
  p = put_varint(p, call.call);
  p = put_varint(p, name_len);
  std::memcpy(p, name, name_len);
  p += name_len;
  commit_frame(FrameTag::Definition, payload, p);
  return ref;
}

void Writer::append(const ClockedCall& call) {
  if (fd_ < 0 || failed()) return;
  const std::uint32_t ref = call_ref(call);

  const std::size_t n = world_size_;
  const std::size_t given = std::min(call.clock.size(), n);
  auto value = [&](std::size_t i) -> ClockValue { return i < given ? call.clock[i] : 0; };

  // Deltas are unsigned, so a clock that went back anywhere is written whole.
  bool reset = false;
  std::size_t changed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const ClockValue v = value(i);
    if (v < prev_clock_[i]) reset = true;
    if (v != prev_clock_[i]) ++changed;
  }
  if (reset) {
    changed = 0;
    for (std::size_t i = 0; i < n; ++i) changed += value(i) != 0;
  }

  const std::size_t bound = 1 + kMaxVarintBytes * 5 + call.peers.size() * 5 + 8 + 8 +
                            kMaxVarintBytes + changed * (5 + kMaxVarintBytes) +
                            call.messages.size() * (4 * kMaxVarintBytes + 8);
  std::uint8_t* payload = reserve(kFrameHeadRoom + bound) + kFrameHeadRoom;
  std::uint8_t* p = payload;
  std::uint8_t& flags = *p++;
  flags = 0;
  if (call.seq != next_seq_) {
    flags |= kCallSeqExplicit;
    p = put_varint(p, call.seq);
  }
  next_seq_ = call.seq + 1;
  if (call.event_seq >= prev_event_) {
    p = put_varint(p, call.event_seq - prev_event_);
  } else {
    flags |= kCallEventExplicit;
    p = put_varint(p, call.event_seq);
  }
  prev_event_ = call.event_seq;
  p = put_varint(p, ref);
  p = put_varint(p, call.peers.size());
  for (Rank r : call.peers) p = put_varint(p, r.value);
  if (call.group.value != 0) {
    flags |= kCallHasGroup;
    put_u64(p, call.group.value);
  }
  if (call.queue != QueueId{}) {
    flags |= kCallHasQueue;
    put_u64(p, call.queue.a);
    p = put_varint(p, call.queue.b);
  }
  if (reset) {
    flags |= kCallClockReset;
    std::fill(prev_clock_.begin(), prev_clock_.end(), 0);
  }
  p = put_varint(p, changed);
  std::size_t next_index = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const ClockValue v = value(i);
    if (v == prev_clock_[i]) continue;
    p = put_varint(p, i - next_index);
    p = put_varint(p, v - prev_clock_[i]);
    prev_clock_[i] = v;
    next_index = i + 1;
  }
  if (!call.messages.empty()) {
    flags |= kCallHasMessages;
    p = put_varint(p, call.messages.size());
    for (const MessageEnd& m : call.messages) {
      const bool other_comm = m.queue.a != call.queue.a;
      p = put_varint(p, (std::uint64_t{m.peer.value} << 3) | (m.wildcard ? 4u : 0u) |
                            (m.sent ? 2u : 0u) | (other_comm ? 1u : 0u));
      if (other_comm) put_u64(p, m.queue.a);
      p = put_varint(p, m.queue.b);
      p = put_varint(p, m.position);
      p = put_varint(p, m.bytes);
    }
  }
  commit_frame(FrameTag::Call, payload, p);
}

void Writer::append_time(const EventTime& t) {
  if (fd_ < 0 || failed() || t.event_seq <= prev_time_event_) return;
  std::uint64_t site = 0;
  if (t.call_site != 0) {
    auto [it, added] = sites_.try_emplace(t.call_site, static_cast<std::uint32_t>(sites_.size()));
    if (added) {
      std::uint8_t* payload = reserve(kFrameHeadRoom + kMaxVarintBytes + 8) + kFrameHeadRoom;
      std::uint8_t* p = put_varint(payload, it->second);
      put_u64(p, t.call_site);
      commit_frame(FrameTag::Site, payload, p);
    }
    site = std::uint64_t{it->second} + 1;
  }
  std::uint8_t* payload = reserve(kFrameHeadRoom + 4 * kMaxVarintBytes) + kFrameHeadRoom;
  std::uint8_t* p = payload;
  p = put_varint(p, t.event_seq - prev_time_event_);
  p = put_varint(p, zigzag(prev_enter_, t.enter_ns));
  p = put_varint(p, t.previous_leave_ns ? 1 + zigzag(prev_enter_, t.previous_leave_ns) : 0);
  p = put_varint(p, site);
  commit_frame(FrameTag::Time, payload, p);
  prev_time_event_ = t.event_seq;
  prev_enter_ = t.enter_ns;
}

void Writer::append_group(GroupId id, std::span<const Rank> members) {
  if (fd_ < 0 || failed()) return;
  std::uint8_t* payload =
      reserve(kFrameHeadRoom + 8 + kMaxVarintBytes + members.size() * 5) + kFrameHeadRoom;
  std::uint8_t* p = payload;
  put_u64(p, id.value);
  p = put_varint(p, members.size());
  for (Rank r : members) p = put_varint(p, r.value);
  commit_frame(FrameTag::Group, payload, p);
}

void Writer::append_sync(const ClockSync& sync) {
  if (fd_ < 0 || failed()) return;
  std::uint8_t* payload = reserve(kFrameHeadRoom + 1 + 8 + 2 * kMaxVarintBytes) + kFrameHeadRoom;
  std::uint8_t* p = payload;
  *p++ = static_cast<std::uint8_t>(sync.phase);
  put_u64(p, sync.local_ns);
  p = put_varint(p, zigzag(0, static_cast<std::uint64_t>(sync.offset_ns)));
  p = put_varint(p, sync.rtt_ns);
  commit_frame(FrameTag::Sync, payload, p);
}

void Writer::write_all(const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      error_ = "writing trace file " + path_ + ": " + errno_text();
      return;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
    written_ += static_cast<std::uint64_t>(w);
  }
}

void Writer::flush() {
  if (fd_ < 0 || used_ == 0) return;
  if (!failed()) write_all(buf_.data(), used_);
  used_ = 0;
}

void Writer::close() {
  if (fd_ < 0) return;
  flush();
  if (::close(fd_) != 0 && !failed()) error_ = "closing trace file " + path_ + ": " + errno_text();
  fd_ = -1;
}

// ---------------------------------------------------------------- Reader

Reader::~Reader() {
  if (file_) std::fclose(file_);
}

bool Reader::fill(std::size_t n) {
  if (end_ - pos_ >= n) return true;
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (buf_.size() < n) buf_.resize(std::max(n, buf_.size() * 2));
  while (end_ < n && !eof_) {
    const std::size_t got = std::fread(buf_.data() + end_, 1, buf_.size() - end_, file_);
    end_ += got;
    if (got == 0) eof_ = true;
  }
  return end_ >= n;
}

bool Reader::open(const std::string& path, std::string* error) {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  path_ = path;
  header_ = FileHeader{};
  pos_ = end_ = 0;
  frame_offset_ = 0;
  eof_ = truncated_ = done_ = false;
  error_.clear();
  names_.clear();
  next_seq_ = 0;
  prev_event_ = prev_time_event_ = prev_enter_ = 0;
  sites_.clear();
  groups_.clear();
  syncs_.clear();
  timed_ = false;
  times_.clear();
  pending_.clear();
  auto fail = [&](const std::string& why) {
    if (error) *error = why;
    if (file_) std::fclose(file_);
    file_ = nullptr;
    return false;
  };
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) return fail("cannot open " + path + ": " + errno_text());
  buf_.resize(64 * 1024);
  const bool whole = fill(sizeof(FileHeader));
  if (std::ferror(file_)) return fail("cannot read " + path + ": " + errno_text());
  const std::size_t have = std::min(end_, sizeof kMagic);
  if (have == 0 || std::memcmp(buf_.data(), kMagic, have) != 0)
    return fail(path + " is not a vcx trace file");
  if (!whole)
    return fail(path + ": the trace header is incomplete (the run ended before it was written)");
  std::memcpy(&header_, buf_.data(), sizeof header_);
  if (header_.version != kFormatVersion)
    return fail(path + " has trace format version " + std::to_string(header_.version) +
                ", this vcx reads version " + std::to_string(kFormatVersion));
  if (header_.header_size < sizeof(FileHeader) || header_.header_size > 4096 ||
      header_.world_size == 0 || header_.rank >= header_.world_size)
    return fail(path + ": corrupt trace header");
  if (!fill(header_.header_size))
    return fail(path + ": the trace header is incomplete (the run ended before it was written)");
  pos_ = header_.header_size;
  frame_offset_ = header_.header_size;
  clock_.assign(header_.world_size, 0);
  return true;
}

bool Reader::corrupt(const std::string& why) {
  error_ = path_ + ": corrupt record at offset " + std::to_string(frame_offset_) + ": " + why;
  done_ = true;
  return false;
}

bool Reader::read_failed() {
  error_ = "cannot read " + path_ + ": " + errno_text();
  done_ = true;
  return false;
}

bool Reader::next(Record& out) {
  for (;;) {
    if (!pending_.empty() && (done_ || front_ready())) {
      deliver(out);
      return true;
    }
    if (!read_frame()) {
      // Calls before a bad or cut frame stay readable, without what it held.
      if (pending_.empty()) return false;
      deliver(out);
      return true;
    }
  }
}

// A call's times are in the Time frame of its event, which comes before the
// call, and its return time in the next Time frame. A call whose event has
// no Time frame before it has no times at all.
bool Reader::front_ready() const {
  return times_.empty() || times_.back().event != pending_.front().event;
}

void Reader::deliver(Record& out) {
  Record& f = pending_.front();
  while (!times_.empty() && times_.front().event < f.event) times_.pop_front();
  if (!times_.empty() && times_.front().event == f.event) {
    f.enter_ns = times_.front().enter;
    f.leave_ns = times_.front().leave;
    f.call_site = times_.front().site;
  }
  std::swap(out, f);
  pending_.pop_front();
}

bool Reader::read_frame() {
  while (file_ && !done_) {
    if (!fill(1)) {
      if (std::ferror(file_)) return read_failed();
      done_ = true;  // clean end: the last frame was complete
      return false;
    }
    fill(1 + kMaxVarintBytes);
    const std::size_t avail = end_ - pos_;
    const std::uint8_t* p = buf_.data() + pos_;
    const std::uint8_t* len_end = p + std::min(avail, 1 + kMaxVarintBytes);
    const bool len_complete = std::any_of(p + 1, len_end, [](std::uint8_t b) { return !(b & 0x80); });
    if (!len_complete && avail < 1 + kMaxVarintBytes) {
      if (std::ferror(file_)) return read_failed();
      truncated_ = done_ = true;
      return false;
    }
    std::uint64_t len = 0;
    const std::uint8_t* payload = get_varint(p + 1, len_end, len);
    if (!payload) return corrupt("bad frame length");
    if (len > kMaxFrameLength) return corrupt("frame length " + std::to_string(len));
    const auto tag = static_cast<FrameTag>(p[0]);
    if (tag != FrameTag::Definition && tag != FrameTag::Call && tag != FrameTag::Time &&
        tag != FrameTag::Site && tag != FrameTag::Group && tag != FrameTag::Sync)
      return corrupt("unknown frame tag " + std::to_string(p[0]));
    const std::size_t head = static_cast<std::size_t>(payload - p);
    const std::size_t total = head + static_cast<std::size_t>(len);
    if (!fill(total)) {
      if (std::ferror(file_)) return read_failed();
      truncated_ = done_ = true;
      return false;
    }
    p = buf_.data() + pos_;
    const std::uint8_t* b = p + head;
    const std::uint8_t* e = p + total;
    bool ok = false;
    switch (tag) {
      case FrameTag::Definition: ok = parse_definition(b, e); break;
      case FrameTag::Call: ok = parse_call(b, e, scratch_); break;
      case FrameTag::Time: ok = parse_time(b, e); break;
      case FrameTag::Site: ok = parse_site(b, e); break;
      case FrameTag::Group: ok = parse_group(b, e); break;
      case FrameTag::Sync: ok = parse_sync(b, e); break;
    }
    if (!ok) return false;
    pos_ += total;
    frame_offset_ += total;
    if (tag == FrameTag::Call) {
      pending_.emplace_back();
      std::swap(pending_.back(), scratch_);
    }
    return true;
  }
  return false;
}

bool Reader::parse_time(const std::uint8_t* p, const std::uint8_t* end) {
  std::uint64_t gap = 0, enter = 0, leave = 0, site = 0;
  if (!(p = get_varint(p, end, gap)) || !(p = get_varint(p, end, enter)) ||
      !(p = get_varint(p, end, leave)) || !(p = get_varint(p, end, site)))
    return corrupt("short time record");
  if (p != end) return corrupt("trailing bytes in time record");
  if (gap == 0) return corrupt("time record of an event already timed");
  if (site > sites_.size()) return corrupt("undefined call site " + std::to_string(site - 1));
  if (leave != 0 && !times_.empty() && times_.back().event == prev_time_event_)
    times_.back().leave = unzigzag(prev_enter_, leave - 1);
  const Times t{prev_time_event_ + gap, unzigzag(prev_enter_, enter), 0,
                site ? sites_[site - 1] : 0};
  times_.push_back(t);
  prev_time_event_ = t.event;
  prev_enter_ = t.enter;
  timed_ = true;
  return true;
}

bool Reader::parse_group(const std::uint8_t* p, const std::uint8_t* end) {
  std::uint64_t id = 0, count = 0;
  if (!get_u64(p, end, id) || !(p = get_varint(p, end, count)) ||
      count > static_cast<std::uint64_t>(end - p))
    return corrupt("bad group definition");
  std::vector<Rank> members;
  members.reserve(static_cast<std::size_t>(count));
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t r = 0;
    if (!(p = get_varint(p, end, r)) || r >= header_.world_size)
      return corrupt("bad group member");
    members.push_back(Rank{static_cast<std::uint32_t>(r)});
  }
  if (p != end) return corrupt("trailing bytes in group definition");
  groups_[id] = std::move(members);
  return true;
}

bool Reader::parse_sync(const std::uint8_t* p, const std::uint8_t* end) {
  ClockSync s;
  std::uint64_t offset = 0;
  if (p == end) return corrupt("empty clock sync");
  s.phase = *p++;
  if (s.phase > 1 || !get_u64(p, end, s.local_ns) || !(p = get_varint(p, end, offset)) ||
      !(p = get_varint(p, end, s.rtt_ns)) || p != end)
    return corrupt("bad clock sync");
  s.offset_ns = static_cast<std::int64_t>(unzigzag(0, offset));
  syncs_.push_back(s);
  return true;
}

bool Reader::parse_site(const std::uint8_t* p, const std::uint8_t* end) {
  std::uint64_t ref = 0, address = 0;
  if (!(p = get_varint(p, end, ref)) || !get_u64(p, end, address) || p != end)
    return corrupt("bad call-site definition");
  if (ref != sites_.size()) return corrupt("call site defined out of order");
  sites_.push_back(address);
  return true;
}

bool Reader::parse_definition(const std::uint8_t* p, const std::uint8_t* end) {
  std::uint64_t ref = 0, model = 0, call = 0, len = 0;
  if (!(p = get_varint(p, end, ref)) || !(p = get_varint(p, end, model)) ||
      !(p = get_varint(p, end, call)) || !(p = get_varint(p, end, len)))
    return corrupt("short call-name definition");
  if (ref != names_.size()) return corrupt("call name defined out of order");
  if (model > 0xff || call > 0xffff) return corrupt("call id out of range");
  if (len != static_cast<std::uint64_t>(end - p)) return corrupt("call name length mismatch");
  names_.push_back({std::string(reinterpret_cast<const char*>(p), len),
                    static_cast<std::uint8_t>(model), static_cast<std::uint16_t>(call)});
  return true;
}

bool Reader::parse_call(const std::uint8_t* p, const std::uint8_t* end, Record& out) {
  if (p == end) return corrupt("empty call record");
  const std::uint8_t flags = *p++;
  if (flags & ~kCallKnownFlags) return corrupt("unknown flags");
  std::uint64_t seq = next_seq_;
  if ((flags & kCallSeqExplicit) && !(p = get_varint(p, end, seq))) return corrupt("bad seq");
  std::uint64_t event = 0;
  if (!(p = get_varint(p, end, event))) return corrupt("bad event");
  if (!(flags & kCallEventExplicit)) event += prev_event_;
  std::uint64_t ref = 0, npeers = 0;
  if (!(p = get_varint(p, end, ref))) return corrupt("bad call reference");
  if (ref >= names_.size()) return corrupt("undefined call reference " + std::to_string(ref));
  if (!(p = get_varint(p, end, npeers)) || npeers > static_cast<std::uint64_t>(end - p))
    return corrupt("bad peer count");
  out.peers.clear();
  for (std::uint64_t i = 0; i < npeers; ++i) {
    std::uint64_t r = 0;
    if (!(p = get_varint(p, end, r)) || r > 0xffffffffu) return corrupt("bad peer");
    out.peers.push_back(Rank{static_cast<std::uint32_t>(r)});
  }
  out.group = GroupId{};
  if ((flags & kCallHasGroup) && !get_u64(p, end, out.group.value)) return corrupt("bad group");
  out.queue = QueueId{};
  if ((flags & kCallHasQueue) &&
      (!get_u64(p, end, out.queue.a) || !(p = get_varint(p, end, out.queue.b))))
    return corrupt("bad queue");

  // Decode into a copy first so a malformed record leaves the clock as it was.
  const std::size_t n = clock_.size();
  out.clock.assign(clock_.begin(), clock_.end());
  if (flags & kCallClockReset) std::fill(out.clock.begin(), out.clock.end(), 0);
  std::uint64_t changed = 0;
  if (!(p = get_varint(p, end, changed)) || changed > n) return corrupt("bad clock entry count");
  std::uint64_t next_index = 0;
  for (std::uint64_t k = 0; k < changed; ++k) {
    std::uint64_t gap = 0, delta = 0;
    if (!(p = get_varint(p, end, gap)) || !(p = get_varint(p, end, delta)))
      return corrupt("short clock");
    if (gap >= n - next_index) return corrupt("clock index out of range");
    const std::size_t i = static_cast<std::size_t>(next_index + gap);
    if (out.clock[i] + delta < out.clock[i]) return corrupt("clock entry overflows");
    out.clock[i] += delta;
    next_index = i + 1;
  }
  out.messages.clear();
  if (flags & kCallHasMessages) {
    std::uint64_t count = 0;
    if (!(p = get_varint(p, end, count)) || count > static_cast<std::uint64_t>(end - p))
      return corrupt("bad message count");
    for (std::uint64_t k = 0; k < count; ++k) {
      std::uint64_t head = 0;
      MessageEnd m;
      if (!(p = get_varint(p, end, head)) || (head >> 3) >= header_.world_size)
        return corrupt("bad message");
      m.peer = Rank{static_cast<std::uint32_t>(head >> 3)};
      m.wildcard = (head & 4) != 0;
      m.sent = (head & 2) != 0;
      m.queue.a = out.queue.a;
      if ((head & 1) && !get_u64(p, end, m.queue.a)) return corrupt("bad message queue");
      if (!(p = get_varint(p, end, m.queue.b)) || !(p = get_varint(p, end, m.position)) ||
          !(p = get_varint(p, end, m.bytes)))
        return corrupt("bad message");
      out.messages.push_back(m);
    }
  }
  if (p != end) return corrupt("trailing bytes in call record");

  clock_.assign(out.clock.begin(), out.clock.end());
  next_seq_ = seq + 1;
  prev_event_ = event;
  const Name& name = names_[ref];
  out.seq = seq;
  out.event = event;
  out.enter_ns = out.leave_ns = out.call_site = 0;
  out.call.assign(name.text);
  out.model = name.model;
  out.call_id = name.call;
  return true;
}

}  // namespace vcx::trace
