// The trace: binary format round trip, crash-truncated files, the trace
// module as the tool loads it, and `vcx-trace export`.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "vcx/exchange.h"
#include "vcx/plugin.h"
#include "vcx/plugin_loader.h"
#include "vcx/trace_format.h"
#include "vcx/transport.h"

namespace fs = std::filesystem;
using namespace vcx;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "vcx-trace-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A clocked call that owns what ClockedCall only points at.
struct Call {
  std::uint64_t seq = 0;
  std::uint64_t event = 0;
  Model model = Model::Mpi;
  std::uint16_t call = 0;
  std::string name;
  std::vector<Rank> peers;
  GroupId group{};
  QueueId queue{};
  std::vector<ClockValue> clock;
  std::vector<MessageEnd> messages;

  ClockedCall view(Rank rank) const {
    ClockedCall c;
    c.rank = rank;
    c.seq = seq;
    c.event_seq = event;
    c.model = model;
    c.call = call;
    c.call_name = name.c_str();
    c.peers = peers;
    c.group = group;
    c.queue = queue;
    c.clock = clock;
    c.messages = messages;
    return c;
  }
};

bool same_messages(const std::vector<MessageEnd>& a, const std::vector<MessageEnd>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const MessageEnd& x, const MessageEnd& y) {
                      return x.peer == y.peer && x.sent == y.sent &&
                             x.wildcard == y.wildcard && x.queue == y.queue &&
                             x.bytes == y.bytes &&
                             x.position == y.position;
                    });
}

void require_same(const trace::Record& got, const Call& want) {
  REQUIRE(got.seq == want.seq);
  REQUIRE(got.event == want.event);
  REQUIRE(got.call == want.name);
  REQUIRE(got.model == static_cast<std::uint8_t>(want.model));
  REQUIRE(got.call_id == want.call);
  REQUIRE(got.peers == want.peers);
  REQUIRE(got.group == want.group);
  REQUIRE(got.queue == want.queue);
  REQUIRE(got.clock == want.clock);
  REQUIRE(same_messages(got.messages, want.messages));
}

// Random calls as a real rank makes them: its own entry ticks every call,
// others grow now and then by receives and collectives.
std::vector<Call> random_calls(std::mt19937_64& rng, Rank self, std::uint32_t n,
                               std::size_t count) {
  std::uniform_int_distribution<int> pct(0, 99);
  std::vector<std::string> names = {"MPI_Send", "MPI_Recv", "MPI_Barrier", "", "x",
                                    "name \"quoted\" \\ \t", "\xc3\xa9t\xc3\xa9"};
  for (int i = 0; i < 10; ++i) names.push_back("call_" + std::to_string(rng()));
  std::vector<Call> out;
  std::vector<ClockValue> clock(n, 0);
  std::uint64_t seq = rng() % 3 == 0 ? rng() % 1000 : 0;
  std::uint64_t event = rng() % 5;
  for (std::size_t k = 0; k < count; ++k) {
    Call c;
    if (pct(rng) < 3) seq += 1 + rng() % 100000;  // a gap now and then
    c.seq = seq++;
    // Events between clocked calls are not clocked; rarely, one goes back.
    event = pct(rng) < 1 ? rng() % (event + 1) : event + 1 + (pct(rng) < 20 ? rng() % 9 : 0);
    c.event = event;
    const std::size_t which = rng() % names.size();
    // Each (model, call) pair keeps its name, as the translators' tables do.
    c.model = which % 2 ? Model::Mpi : Model::Shmem;
    c.call = static_cast<std::uint16_t>(which * 997);
    c.name = names[which];
    for (std::size_t p = rng() % 5; p > 0; --p) c.peers.push_back(Rank{static_cast<std::uint32_t>(rng() % n)});
    if (pct(rng) < 30) c.group = GroupId{rng()};
    if (pct(rng) < 50) c.queue = QueueId{pct(rng) < 20 ? 0 : rng(), pct(rng) < 50 ? rng() % 100 : rng()};
    for (std::size_t m = pct(rng) < 60 ? rng() % 4 : 0; m > 0; --m) {
      MessageEnd e;
      e.peer = Rank{static_cast<std::uint32_t>(rng() % n)};
      e.sent = rng() % 2;
      e.wildcard = !e.sent && rng() % 3 == 0;
      // Mostly on the call's own communicator, as MPI messages are.
      e.queue = QueueId{pct(rng) < 70 ? c.queue.a : rng(), pct(rng) < 50 ? rng() % 100 : rng()};
      e.position = pct(rng) < 90 ? 1 + rng() % 1000 : rng();
      e.bytes = pct(rng) < 30 ? 0 : pct(rng) < 90 ? rng() % 100000 : rng();
      c.messages.push_back(e);
    }
    ++clock[self.value];
    for (std::size_t m = rng() % 4; m > 0; --m) {
      const std::size_t i = rng() % n;
      clock[i] += pct(rng) < 5 ? (rng() >> 20) : rng() % 50;
    }
    c.clock = clock;
    out.push_back(std::move(c));
  }
  return out;
}

void write_trace(const std::string& path, Rank rank, std::uint32_t n, const std::vector<Call>& calls,
                 std::size_t flush_bytes = trace::Writer::kDefaultFlushBytes) {
  trace::Writer w(flush_bytes);
  std::string err;
  REQUIRE(w.open(path, rank, n, &err));
  for (const auto& c : calls) w.append(c.view(rank));
  w.close();
  REQUIRE_FALSE(w.failed());
}

std::vector<trace::Record> read_all(trace::Reader& r) {
  std::vector<trace::Record> out;
  trace::Record rec;
  while (r.next(rec)) out.push_back(rec);
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("trace varints round trip and reject bad input", "[trace]") {
  const std::uint64_t values[] = {0, 1, 127, 128, 300, 16383, 16384, 1ull << 32, (1ull << 63) - 1,
                                  1ull << 63, ~0ull};
  for (std::uint64_t v : values) {
    std::uint8_t buf[trace::kMaxVarintBytes];
    std::uint8_t* end = trace::put_varint(buf, v);
    std::uint64_t got = 0;
    REQUIRE(trace::get_varint(buf, end, got) == end);
    REQUIRE(got == v);
    // Any shorter input ends inside the varint.
    for (std::uint8_t* cut = buf; cut < end; ++cut) REQUIRE(trace::get_varint(buf, cut, got) == nullptr);
  }
  std::uint8_t too_long[11];
  std::fill(std::begin(too_long), std::end(too_long), 0x80);
  too_long[10] = 0;
  std::uint64_t v = 0;
  REQUIRE(trace::get_varint(too_long, too_long + 11, v) == nullptr);
  std::uint8_t overflow[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  REQUIRE(trace::get_varint(overflow, overflow + 10, v) == nullptr);
}

TEST_CASE("trace files round trip random records exactly", "[trace]") {
  TempDir dir;
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 30; ++round) {
    const std::uint32_t n = round == 0 ? 1 : 1 + static_cast<std::uint32_t>(rng() % (round < 25 ? 64 : 2000));
    const Rank self{static_cast<std::uint32_t>(rng() % n)};
    const auto calls = random_calls(rng, self, n, 1 + rng() % 600);
    // Tiny flush thresholds push frames through every buffer boundary.
    const std::size_t flush = round % 3 == 0 ? 1 : round % 3 == 1 ? 97 : trace::Writer::kDefaultFlushBytes;
    const std::string path = dir / ("round-" + std::to_string(round) + ".vcxt");
    write_trace(path, self, n, calls, flush);

    trace::Reader r;
    std::string err;
    REQUIRE(r.open(path, &err));
    REQUIRE(r.rank() == self);
    REQUIRE(r.world_size() == n);
    const auto got = read_all(r);
    REQUIRE(r.error() == "");
    REQUIRE_FALSE(r.truncated());
    REQUIRE(got.size() == calls.size());
    for (std::size_t i = 0; i < got.size(); ++i) require_same(got[i], calls[i]);
  }
}

TEST_CASE("trace delta encoding keeps a typical record small", "[trace]") {
  TempDir dir;
  std::vector<Call> calls;
  std::vector<ClockValue> clock(1024, 0);
  for (int i = 0; i < 1000; ++i) {
    Call c;
    c.seq = static_cast<std::uint64_t>(i);
    c.name = "MPI_Send";
    c.peers = {Rank{5}};
    c.queue = QueueId{0x1234, 7};
    ++clock[3];
    c.clock = clock;
    calls.push_back(c);
  }
  write_trace(dir / "t.vcxt", Rank{3}, 1024, calls);
  // Header, one name, then per call: tag, length, flags, event gap, ref, peer
  // count, peer, queue (8 + 1), changed-entry count, one entry (gap, delta):
  // 19 bytes, where the dense clock alone would be 8 KiB.
  REQUIRE(fs::file_size(dir / "t.vcxt") <= sizeof(trace::FileHeader) + 32 + 19 * 1000);
}

TEST_CASE("trace clocks that go back or are short are still exact", "[trace]") {
  TempDir dir;
  std::vector<Call> calls(4);
  calls[0].clock = {5, 9, 2};
  calls[1].clock = {6, 3, 2};  // entry 1 went back: written against zero
  calls[2].clock = {6, 3, 0};
  calls[3].clock = {7, 3, 0};
  for (std::size_t i = 0; i < calls.size(); ++i) {
    calls[i].seq = i;
    calls[i].name = "c";
  }
  write_trace(dir / "t.vcxt", Rank{0}, 3, calls);
  trace::Reader r;
  REQUIRE(r.open(dir / "t.vcxt", nullptr));
  const auto got = read_all(r);
  REQUIRE(got.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) require_same(got[i], calls[i]);

  // A clock with fewer entries than the world counts the rest as zero.
  trace::Writer w;
  REQUIRE(w.open(dir / "short.vcxt", Rank{1}, 4, nullptr));
  Call s;
  s.name = "c";
  s.clock = {1, 2};
  w.append(s.view(Rank{1}));
  w.close();
  REQUIRE(r.open(dir / "short.vcxt", nullptr));
  trace::Record rec;
  REQUIRE(r.next(rec));
  REQUIRE(rec.clock == std::vector<ClockValue>{1, 2, 0, 0});
}

TEST_CASE("trace reader ignores a record cut short by a crash", "[trace]") {
  TempDir dir;
  std::mt19937_64 rng(7);
  const std::uint32_t n = 40;
  auto calls = random_calls(rng, Rank{2}, n, 50);
  // The last call has a name of its own, so its definition frame is cut too.
  calls.back().call = 4242;
  calls.back().name = "MPI_Last_call_with_a_long_name";
  calls.back().peers = {Rank{1}, Rank{39}};
  calls.back().group = GroupId{0xdeadbeefcafef00dull};

  const std::string full = dir / "full.vcxt";
  trace::Writer w;
  REQUIRE(w.open(full, Rank{2}, n, nullptr));
  for (std::size_t i = 0; i + 1 < calls.size(); ++i) w.append(calls[i].view(Rank{2}));
  const std::uint64_t boundary = w.offset();
  w.append(calls.back().view(Rank{2}));
  w.close();
  const std::string bytes = slurp(full);
  REQUIRE(bytes.size() > boundary);

  const std::string cut_path = dir / "cut.vcxt";
  SECTION("every cut inside the last record") {
    // The last call is two frames (its name, then the call); a cut between
    // them or before both looks like a clean end, any other is a partial tail.
    int clean_ends = 0;
    for (std::size_t cut = boundary; cut < bytes.size(); ++cut) {
      spit(cut_path, bytes.substr(0, cut));
      trace::Reader r;
      std::string err;
      REQUIRE(r.open(cut_path, &err));
      const auto got = read_all(r);
      INFO("cut at " << cut << " of " << bytes.size());
      REQUIRE(r.error() == "");
      if (cut == boundary) REQUIRE_FALSE(r.truncated());
      clean_ends += !r.truncated();
      REQUIRE(got.size() == calls.size() - 1);
      for (std::size_t i = 0; i < got.size(); ++i) require_same(got[i], calls[i]);
    }
    REQUIRE(clean_ends == 2);
  }
  SECTION("every cut anywhere gives a prefix of the records") {
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      spit(cut_path, bytes.substr(0, cut));
      trace::Reader r;
      std::string err;
      INFO("cut at " << cut);
      if (cut < sizeof(trace::FileHeader)) {
        REQUIRE_FALSE(r.open(cut_path, &err));
        REQUIRE(err != "");
        continue;
      }
      REQUIRE(r.open(cut_path, &err));
      const auto got = read_all(r);
      REQUIRE(r.error() == "");
      for (std::size_t i = 0; i < got.size(); ++i) require_same(got[i], calls[i]);
    }
  }
}

namespace {

// What the trace module writes of a run: every event's times as the tool
// reads it, each clocked call once the engine ran it (some events later).
struct TimedRun {
  std::vector<Call> calls;
  std::vector<EventTime> times;  // one per event, events 1..N
  std::vector<std::uint64_t> leave;  // of event e at [e]
};

TimedRun timed_run(std::mt19937_64& rng, std::size_t events) {
  TimedRun run;
  std::uniform_int_distribution<int> pct(0, 99);
  std::uint64_t t = 1'000'000'000'000ull + rng() % 1'000'000;
  const std::uint64_t sites[] = {0, 0x401234, 0x7f00deadbeef, 0x401300};
  run.leave.assign(events + 1, 0);
  std::vector<ClockValue> clock(3, 0);
  for (std::uint64_t e = 1; e <= events; ++e) {
    EventTime et;
    et.event_seq = e;
    t += rng() % 5000;
    et.enter_ns = t;
    et.previous_leave_ns = e > 1 ? run.leave[e - 1] : 0;
    et.call_site = sites[rng() % 4];
    run.times.push_back(et);
    // A call returns some time after it was entered; under several threads
    // the next call may even be entered first.
    run.leave[e] = pct(rng) < 5 ? 0 : t + (pct(rng) < 10 ? rng() % 10'000'000 : rng() % 3000);
    if (pct(rng) < 70) {  // a clocked call
      Call c;
      c.seq = run.calls.size();
      c.event = e;
      c.name = "c";
      ++clock[0];
      c.clock = clock;
      run.calls.push_back(c);
    }
  }
  return run;
}

// Writes the run with the engine `lag` events behind the tool's reading.
void write_timed(const std::string& path, const TimedRun& run, std::size_t lag) {
  trace::Writer w(97);
  REQUIRE(w.open(path, Rank{0}, 3, nullptr));
  std::size_t next_call = 0;
  auto run_calls_up_to = [&](std::uint64_t event) {
    for (; next_call < run.calls.size() && run.calls[next_call].event <= event; ++next_call)
      w.append(run.calls[next_call].view(Rank{0}));
  };
  for (const EventTime& t : run.times) {
    w.append_time(t);
    if (t.event_seq > lag) run_calls_up_to(t.event_seq - lag);
  }
  EventTime detach{run.times.size() + 1, run.times.back().enter_ns + 10,
                   run.leave[run.times.size()], 0};
  w.append_time(detach);
  run_calls_up_to(~0ull);
  w.close();
}

}  // namespace

TEST_CASE("trace calls get the times and call site of their event", "[trace]") {
  TempDir dir;
  std::mt19937_64 rng(31337);
  for (std::size_t lag : {0u, 1u, 2u, 50u, 100000u}) {
    const TimedRun run = timed_run(rng, 3000);
    const std::string path = dir / "timed.vcxt";
    write_timed(path, run, lag);
    trace::Reader r;
    REQUIRE(r.open(path, nullptr));
    const auto got = read_all(r);
    INFO("engine " << lag << " events behind");
    REQUIRE(r.error() == "");
    REQUIRE(r.timed());
    REQUIRE(got.size() == run.calls.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      require_same(got[i], run.calls[i]);
      const EventTime& t = run.times[got[i].event - 1];
      REQUIRE(got[i].enter_ns == t.enter_ns);
      REQUIRE(got[i].call_site == t.call_site);
      REQUIRE(got[i].leave_ns == run.leave[got[i].event]);
    }
  }

  SECTION("a cut trace keeps its calls; the last ones may lack their return") {
    const TimedRun run = timed_run(rng, 400);
    const std::string path = dir / "full.vcxt";
    write_timed(path, run, 3);
    const std::string bytes = slurp(path);
    for (std::size_t cut = sizeof(trace::FileHeader); cut < bytes.size(); cut += 7) {
      spit(dir / "cut.vcxt", bytes.substr(0, cut));
      trace::Reader r;
      REQUIRE(r.open(dir / "cut.vcxt", nullptr));
      const auto got = read_all(r);
      INFO("cut at " << cut);
      REQUIRE(r.error() == "");
      for (std::size_t i = 0; i < got.size(); ++i) {
        require_same(got[i], run.calls[i]);
        REQUIRE(got[i].enter_ns == run.times[got[i].event - 1].enter_ns);
        REQUIRE((got[i].leave_ns == run.leave[got[i].event] || got[i].leave_ns == 0));
      }
    }
  }
  SECTION("a trace without times gives calls without times") {
    std::vector<Call> calls = random_calls(rng, Rank{0}, 3, 100);
    write_trace(dir / "plain.vcxt", Rank{0}, 3, calls);
    trace::Reader r;
    REQUIRE(r.open(dir / "plain.vcxt", nullptr));
    const auto got = read_all(r);
    REQUIRE_FALSE(r.timed());
    REQUIRE(got.size() == calls.size());
    for (const auto& g : got) REQUIRE((g.enter_ns == 0 && g.leave_ns == 0 && g.call_site == 0));
  }
}

TEST_CASE("trace groups are read back, and calls name them", "[trace]") {
  TempDir dir;
  trace::Writer w;
  REQUIRE(w.open(dir / "g.vcxt", Rank{1}, 5, nullptr));
  const std::vector<Rank> world = {Rank{0}, Rank{1}, Rank{2}, Rank{3}, Rank{4}};
  const std::vector<Rank> odd = {Rank{3}, Rank{1}};  // group order, not rank order
  w.append_group(GroupId{0x77}, world);
  Call c;
  c.name = "MPI_Barrier";
  c.group = GroupId{0x77};
  c.clock = {1, 1, 1, 1, 1};
  w.append(c.view(Rank{1}));
  w.append_group(GroupId{0x99}, odd);
  w.close();
  trace::Reader r;
  REQUIRE(r.open(dir / "g.vcxt", nullptr));
  trace::Record rec;
  REQUIRE(r.next(rec));
  REQUIRE(r.groups().at(0x77) == world);
  REQUIRE_FALSE(r.next(rec));
  REQUIRE(r.error() == "");
  REQUIRE(r.groups().at(0x99) == odd);
  REQUIRE(r.syncs().empty());

  // A member outside the world is corruption.
  trace::Writer bad;
  REQUIRE(bad.open(dir / "bad.vcxt", Rank{0}, 2, nullptr));
  bad.append_group(GroupId{1}, world);
  bad.close();
  REQUIRE(r.open(dir / "bad.vcxt", nullptr));
  REQUIRE_FALSE(r.next(rec));
  REQUIRE(r.error().find("group member") != std::string::npos);
}

TEST_CASE("trace clock offsets are read back", "[trace]") {
  TempDir dir;
  trace::Writer w;
  REQUIRE(w.open(dir / "s.vcxt", Rank{1}, 2, nullptr));
  const ClockSync start{0, -123'456'789, 1'000'000'000'000ull, 4'000};
  const ClockSync end{1, 987'654, 1'000'090'000'000ull, 3'000};
  w.append_sync(start);
  Call c;
  c.name = "MPI_Send";
  c.clock = {0, 1};
  w.append(c.view(Rank{1}));
  w.append_sync(end);
  w.close();
  trace::Reader r;
  REQUIRE(r.open(dir / "s.vcxt", nullptr));
  const auto got = read_all(r);
  REQUIRE(got.size() == 1);
  REQUIRE(r.error() == "");
  REQUIRE(r.syncs().size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const ClockSync& want = i ? end : start;
    CHECK(r.syncs()[i].phase == want.phase);
    CHECK(r.syncs()[i].offset_ns == want.offset_ns);
    CHECK(r.syncs()[i].local_ns == want.local_ns);
    CHECK(r.syncs()[i].rtt_ns == want.rtt_ns);
  }
}

TEST_CASE("trace reader rejects what is not a readable trace", "[trace]") {
  TempDir dir;
  std::string err;
  trace::Reader r;
  REQUIRE_FALSE(r.open(dir / "missing.vcxt", &err));
  REQUIRE(err.find("cannot open") != std::string::npos);

  spit(dir / "text.vcxt", "hello, this is not a trace at all, not even close");
  REQUIRE_FALSE(r.open(dir / "text.vcxt", &err));
  REQUIRE(err.find("not a vcx trace") != std::string::npos);

  Call c;
  c.name = "MPI_Send";
  c.clock = {1, 0};
  write_trace(dir / "good.vcxt", Rank{0}, 2, {c, c});
  std::string bytes = slurp(dir / "good.vcxt");

  std::string other = bytes;
  other[8] = 9;  // version
  spit(dir / "v9.vcxt", other);
  REQUIRE_FALSE(r.open(dir / "v9.vcxt", &err));
  REQUIRE(err.find("version 9") != std::string::npos);

  other = bytes;
  other[sizeof(trace::FileHeader)] = 0x55;  // first frame tag
  spit(dir / "bad.vcxt", other);
  REQUIRE(r.open(dir / "bad.vcxt", &err));
  trace::Record rec;
  REQUIRE_FALSE(r.next(rec));
  REQUIRE(r.error().find("corrupt") != std::string::npos);
  REQUIRE_FALSE(r.truncated());
}

TEST_CASE("trace directory listing is sorted by rank", "[trace]") {
  TempDir dir;
  for (const char* f : {"rank-10.vcxt", "rank-2.vcxt", "rank-0.vcxt", "rank-01.vcxt", "rank-x.vcxt",
                        "rank-3.vcxt.tmp", "notes.txt"})
    spit(dir / f, "");
  std::vector<trace::RankFile> files;
  std::string err;
  REQUIRE(trace::list_rank_files(dir.path(), files, &err));
  REQUIRE(files.size() == 3);
  REQUIRE(files[0].rank == Rank{0});
  REQUIRE(files[1].rank == Rank{2});
  REQUIRE(files[2].rank == Rank{10});
  REQUIRE(files[2].path == dir / "rank-10.vcxt");
  REQUIRE(trace::rank_file_name(Rank{10}) == "rank-10.vcxt");
  REQUIRE_FALSE(trace::list_rank_files(dir / "nope", files, &err));
  REQUIRE(err.find("no such directory") != std::string::npos);
}

namespace {

class NullTransport final : public PeerTransport {
 public:
  void send(Rank, ToolPart, std::span<const std::uint8_t>) override {}
  void set_handler(ToolPart, Handler) override {}
  Rank self() const override { return Rank{1}; }
  std::uint32_t size() const override { return 3; }
};

class FakeHost final : public ToolHost {
 public:
  Rank rank() const override { return Rank{1}; }
  std::uint32_t world_size() const override { return 3; }
  const Options& options() const override { return options_; }
  PeerTransport& transport() override { return transport_; }
  void reply(std::uint64_t) override {}
  const char* call_name(std::uint8_t model, std::uint16_t call) const override {
    return call == 77 ? "MPI_From_host" : "?";
  }
  [[noreturn]] void fatal(const std::string& why) override { throw std::runtime_error(why); }

  Options options_;
  NullTransport transport_;
};

struct LoadedModule {
  LoadedPlugin lib = load_plugin(VCX_PLUGIN_DIR, PluginKind::Module, "trace");
  ~LoadedModule() { unload_plugin(lib); }
};

}  // namespace

TEST_CASE("the built trace module writes what its observer is fed", "[trace][plugin]") {
  LoadedModule m;
  const PluginDescriptor& d = *m.lib.descriptor;
  REQUIRE(d.kind == PluginKind::Module);
  REQUIRE(std::string(d.name) == "trace");
  REQUIRE((d.needs & kNeedsTimestamps) != 0);
  REQUIRE(std::string(d.options[0].name) == "trace.dir");
  REQUIRE(std::string(d.options[0].default_value) == "");
  REQUIRE(d.options[1].name == nullptr);

  TempDir tmp;
  FakeHost host;
  std::string err;

  SECTION("without trace.dir it refuses clearly") {
    REQUIRE(d.create(host, &err) == nullptr);
    REQUIRE(err.find("trace.dir") != std::string::npos);
  }
  SECTION("an unusable trace.dir is an error") {
    spit(tmp / "file", "x");
    host.options_.set("trace.dir", tmp / "file/sub");
    REQUIRE(d.create(host, &err) == nullptr);
    REQUIRE(err.find("file") != std::string::npos);
  }
  SECTION("calls go to <trace.dir>/rank-<R>.vcxt") {
    const std::string tdir = tmp / "a/b/trace";
    host.options_.set("trace.dir", tdir);
    Plugin* p = d.create(host, &err);
    REQUIRE(p != nullptr);
    struct stat st{};
    REQUIRE(::stat(tdir.c_str(), &st) == 0);
    REQUIRE((st.st_mode & 0777) == 0700);
    ClockedCallObserver* obs = p->observer();
    REQUIRE(obs != nullptr);

    std::mt19937_64 rng(99);
    auto calls = random_calls(rng, Rank{1}, 3, 20000);
    calls[5].call = 77;
    calls[5].name = "";  // named by the host
    const std::string file = tdir + "/rank-1.vcxt";
    for (std::size_t i = 0; i < calls.size() / 2; ++i) obs->on_clocked_call(calls[i].view(Rank{1}));
    // Buffered data reaches the file every 64 KiB without an explicit flush.
    REQUIRE(fs::file_size(file) >= 64 * 1024);
    obs->flush();
    {
      trace::Reader r;
      REQUIRE(r.open(file, &err));
      REQUIRE(read_all(r).size() == calls.size() / 2);
      REQUIRE_FALSE(r.truncated());
    }
    for (std::size_t i = calls.size() / 2; i < calls.size(); ++i)
      obs->on_clocked_call(calls[i].view(Rank{1}));
    delete p;  // closes the file

    // Calls that come without a name are named by the host.
    for (auto& c : calls)
      if (c.name.empty()) c.name = host.call_name(static_cast<std::uint8_t>(c.model), c.call);
    trace::Reader r;
    REQUIRE(r.open(file, &err));
    REQUIRE(r.rank() == Rank{1});
    REQUIRE(r.world_size() == 3);
    const auto got = read_all(r);
    REQUIRE(r.error() == "");
    REQUIRE_FALSE(r.truncated());
    REQUIRE(got.size() == calls.size());
    for (std::size_t i = 0; i < got.size(); ++i) require_same(got[i], calls[i]);
  }
}

namespace {

struct Ran {
  int status = -1;
  std::string out;
};

Ran run_cli(const std::string& args) {
  const std::string cmd = std::string(VCX_BIN_DIR "/vcx-trace ") + args + " 2>/dev/null";
  Ran r;
  std::FILE* f = ::popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  char buf[4096];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, got);
  const int st = ::pclose(f);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

}  // namespace

TEST_CASE("vcx-trace export prints one JSON line per clocked call", "[trace][cli]") {
  TempDir tmp;
  const std::string tdir = tmp / "trace";
  fs::create_directory(tdir);

  std::vector<Call> r0(2), r1(2);
  r0[0].name = "MPI_Send";
  r0[0].peers = {Rank{1}};
  r0[0].queue = QueueId{0xabc, 5};
  r0[0].clock = {1, 0};
  r0[1].seq = 1;
  r0[1].name = "MPI_Barrier";
  r0[1].call = 9;
  r0[1].group = GroupId{0x10};
  r0[1].clock = {2, 2};
  r1[0].name = "MPI_Recv";
  r1[0].call = 1;
  r1[0].peers = {Rank{0}};
  r1[0].queue = QueueId{0xabc, 5};
  r1[0].clock = {1, 1};
  r1[1].seq = 1;
  r1[1].name = "MPI_Barrier";
  r1[1].call = 9;
  r1[1].group = GroupId{0x10};
  r1[1].clock = {2, 2};
  write_trace(tdir + "/rank-0.vcxt", Rank{0}, 2, r0);
  write_trace(tdir + "/rank-1.vcxt", Rank{1}, 2, r1);

  const std::vector<std::string> all = {
      R"({"rank":0,"seq":0,"event":0,"call":"MPI_Send","peers":[1],"queue":["0xabc","0x5"],)"
      R"("clock":[1,0]})",
      R"({"rank":0,"seq":1,"event":0,"call":"MPI_Barrier","group":"0x10","clock":[2,2]})",
      R"({"rank":1,"seq":0,"event":0,"call":"MPI_Recv","peers":[0],"queue":["0xabc","0x5"],)"
      R"("clock":[1,1]})",
      R"({"rank":1,"seq":1,"event":0,"call":"MPI_Barrier","group":"0x10","clock":[2,2]})",
  };

  Ran r = run_cli("export " + tdir);
  REQUIRE(r.status == 0);
  REQUIRE(lines_of(r.out) == all);

  r = run_cli("export --rank 1 " + tdir);
  REQUIRE(r.status == 0);
  REQUIRE(lines_of(r.out) == std::vector<std::string>(all.begin() + 2, all.end()));

  r = run_cli("summary " + tdir);
  REQUIRE(r.status == 0);
  REQUIRE(r.out.find("rank 1: 2 clocked calls, final clock [2,2]") != std::string::npos);

  // A crash mid-record: the complete records are still exported.
  const std::string bytes = slurp(tdir + "/rank-1.vcxt");
  spit(tdir + "/rank-1.vcxt", bytes.substr(0, bytes.size() - 3));
  r = run_cli("export " + tdir);
  REQUIRE(r.status == 0);
  REQUIRE(lines_of(r.out) == std::vector<std::string>(all.begin(), all.begin() + 3));

  REQUIRE(run_cli("export --rank 5 " + tdir).status == 2);
  REQUIRE(run_cli("export " + tmp / "missing").status == 2);
  REQUIRE(run_cli("export " + tmp.path()).status == 2);  // no rank files: not a trace
  REQUIRE(run_cli("").status == 64);
  REQUIRE(run_cli("frobnicate " + tdir).status == 64);
  REQUIRE(run_cli("export").status == 64);
  REQUIRE(run_cli("export --rank x " + tdir).status == 64);
  REQUIRE(run_cli("--help").status == 0);
  REQUIRE(run_cli("help export").out.find("--rank") != std::string::npos);
}
