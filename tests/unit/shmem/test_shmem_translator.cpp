// The OpenSHMEM translator's annotations and flags (docs/annotations.md,
// docs/clock-rules.md "Flags"): events laid out as the interceptor pushes
// them, fed to the built plugin, and the primitives they become. Built only
// where vcx's OpenSHMEM support is (tests/unit/CMakeLists.txt).
#ifdef VCX_TEST_SHMEM_TRANSLATOR
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../support/engine_sim.h"
#include "shmem_calls.h"
#include "vcx/translator.h"

using namespace vcx;
using namespace vcx::shmem;
using Catch::Matchers::Contains;
using vcx::sim::SimFatal;

namespace {

// One PE's translator, with a control that records what it is asked.
class Control final : public ExchangeControl {
 public:
  void register_group(GroupId, std::span<const Rank>, std::uint32_t) override {}
  ReceiveToken new_receive(bool) override { return ReceiveToken{++tokens}; }
  void bind_receive(ReceiveToken t, Rank src, QueueId q) override {
    binds.push_back({t.value, src.value, q});
  }
  void drop_receive(ReceiveToken) override {}
  void hold_receive(ReceiveToken) override {}
  void release_hold(ReceiveToken) override {}
  void abandon_receive(ReceiveToken) override {}
  void discard_answer(const SendToken&) override {}
  void order_receive_after(ReceiveToken, ReceiveToken) override {}
  void keep_receive_order(ReceiveToken) override {}
  void end_receive_order(ReceiveToken) override {}
  void add_pending_receives(const PendingReceives*) override {}
  SendToken reserve_send(Rank dst, QueueId q) override { return SendToken{dst, q, ++sends}; }

  struct Bind {
    std::uint64_t token;
    std::uint32_t src;
    QueueId queue;
  };
  std::vector<Bind> binds;
  std::uint64_t tokens = 0, sends = 0;
};

class Pe {
 public:
  Pe(std::uint32_t rank, std::uint32_t size)
      : net_(size, 1), transport_(net_, Rank{rank}, size), host_(Rank{rank}, size, transport_) {
    lib_ = load_plugin(VCX_PLUGIN_DIR, PluginKind::Translator, "shmem");
    std::string err;
    plugin_ = lib_.descriptor->create(host_, &err);
    if (!plugin_) throw std::runtime_error("creating the shmem translator: " + err);
    t_ = plugin_->translator();
    InitEvent init{};
    init.world_rank = static_cast<std::int32_t>(rank);
    init.world_size = static_cast<std::int32_t>(size);
    feed(Call::shmem_init, init);
  }
  ~Pe() {
    delete plugin_;
    unload_plugin(lib_);
  }
  Pe(const Pe&) = delete;
  Pe& operator=(const Pe&) = delete;

  template <class T>
  CallProgram feed(Call call, const T& payload) {
    std::vector<std::uint64_t> words((sizeof(EventHeader) + sizeof payload + 7) / 8);
    EventHeader h{};
    h.size = static_cast<std::uint32_t>(event_record_size(sizeof payload));
    h.model = Model::Shmem;
    h.type = static_cast<std::uint16_t>(call);
    h.payload_size = sizeof payload;
    h.seq = ++seq;
    std::memcpy(words.data(), &h, sizeof h);
    std::memcpy(reinterpret_cast<std::uint8_t*>(words.data()) + sizeof h, &payload,
                sizeof payload);
    CallProgram out;
    out.reset(Model::Shmem, h.type, h.seq);
    t_->translate(*reinterpret_cast<const EventHeader*>(words.data()), ctl, out);
    return out;
  }

  Translator& translator() { return *t_; }
  Control ctl;
  std::uint64_t seq = 0;

 private:
  sim::Network net_;
  sim::SimTransport transport_;
  sim::SimHost host_;
  LoadedPlugin lib_;
  Plugin* plugin_ = nullptr;
  Translator* t_ = nullptr;
};

AnnotateEvent annotation(std::int32_t pe, std::int64_t id) {
  AnnotateEvent e{};
  e.pe = pe;
  e.id = id;
  return e;
}

FlagWriteEvent flag_write(Call call, FlagOp op, SymAddr where, std::uint64_t operand,
                          std::int32_t pe, std::uint8_t width = 4, bool is_signed = true,
                          std::uint64_t cond = 0) {
  FlagWriteEvent e{};
  e.remote = where;
  e.operand = operand;
  e.cond = cond;
  e.call = static_cast<std::uint16_t>(call);
  e.op = op;
  e.width = width;
  e.is_signed = is_signed ? 1 : 0;
  e.pe = pe;
  return e;
}

constexpr SymAddr kStatic{1, 0x40};
constexpr SymAddr kHeap{0, 0x7f0000001000};

}  // namespace

TEST_CASE("shmem annotations: names, ticks, queues and resources", "[shmem][annotate]") {
  Pe pe(1, 3);
  const CallProgram t = pe.feed(Call::vcx_annotate_shmem_tick, annotation(0, 0));
  CHECK(t.clocked());
  CHECK(t.ops().empty());
  CHECK(std::string(pe.translator().call_name(t.call())) == "vcx_annotate_shmem_tick");

  const CallProgram s = pe.feed(Call::vcx_annotate_shmem_process_signal, annotation(2, 5));
  REQUIRE(s.ops().size() == 1);
  CHECK(s.clocked());
  CHECK(s.ops()[0].kind == OpKind::Signal);
  CHECK(s.ops()[0].peer == Rank{2});
  CHECK(s.ops()[0].value == 1);
  const QueueId q = s.ops()[0].queue;
  CHECK(q.b == 5);
  const CallProgram w = pe.feed(Call::vcx_annotate_shmem_process_wait, annotation(0, 5));
  REQUIRE(w.ops().size() == 1);
  CHECK(w.ops()[0].kind == OpKind::Wait);
  REQUIRE(pe.ctl.binds.size() == 1);
  CHECK(pe.ctl.binds[0].src == 0);
  CHECK(pe.ctl.binds[0].queue == q);
  CHECK(pe.ctl.binds[0].token == w.ops()[0].value);

  const CallProgram d = pe.feed(Call::vcx_annotate_shmem_resource_signal, annotation(2, 42));
  REQUIRE(d.ops().size() == 2);
  CHECK(d.ops()[0].kind == OpKind::Acquire);
  CHECK(d.ops()[0].flags == kResourceDeposit);
  CHECK(d.ops()[1].kind == OpKind::Release);
  CHECK(d.ops()[0].peer == Rank{2});
  const CallProgram f = pe.feed(Call::vcx_annotate_shmem_resource_wait, annotation(2, 42));
  REQUIRE(f.ops().size() == 1);
  CHECK(f.ops()[0].flags == (kResourceShared | kResourceFetch));
  CHECK(f.ops()[0].queue == d.ops()[0].queue);
  const CallProgram other = pe.feed(Call::vcx_annotate_shmem_resource_wait, annotation(2, 43));
  CHECK(other.ops()[0].queue != d.ops()[0].queue);
}

TEST_CASE("shmem annotations: a PE outside the job or a negative queue stops the run",
          "[shmem][annotate]") {
  Pe pe(0, 3);
  CHECK_THROWS_WITH(pe.feed(Call::vcx_annotate_shmem_process_signal, annotation(3, 1)),
                    Contains("vcx: PE 0: vcx_annotate_shmem_process_signal: PE 3 is outside 0..2"));
  CHECK_THROWS_WITH(pe.feed(Call::vcx_annotate_shmem_resource_wait, annotation(-1, 1)),
                    Contains("PE -1 is outside 0..2"));
  CHECK_THROWS_WITH(pe.feed(Call::vcx_annotate_shmem_process_wait, annotation(1, -4)),
                    Contains("queue -4"));
}

TEST_CASE("shmem flags: stores are registered at the PE written to, with their value",
          "[shmem][flags]") {
  Pe pe(1, 4);
  const CallProgram p =
      pe.feed(Call::vcx_flag_write, flag_write(Call::shmem_int_p, FlagOp::Store, kStatic,
                                               0xffffffffULL, 3));
  CHECK_FALSE(p.clocked());
  CHECK(p.call() == static_cast<std::uint16_t>(Call::shmem_int_p));
  REQUIRE(p.ops().size() == 1);
  const Op& op = p.ops()[0];
  CHECK(op.kind == OpKind::FlagWrite);
  CHECK(op.peer == Rank{3});
  CHECK(op.queue.b == 0xffffffffULL);
  CHECK(op.value == p.event_seq());
  CHECK(flag_mode(op.flags) == kFlagStore);
  CHECK(flag_width(op.flags) == 4);
  CHECK(flag_signed(op.flags));
  // Named by the symmetric address: the same one is the same flag, another
  // one another flag, and a flag is not the lock at the same address.
  const CallProgram same = pe.feed(
      Call::vcx_flag_write, flag_write(Call::shmem_int_atomic_set, FlagOp::Store, kStatic, 1, 0));
  CHECK(same.ops()[0].queue.a == op.queue.a);
  LockEvent lock{};
  lock.lock = kStatic;
  const CallProgram l = pe.feed(Call::shmem_clear_lock, lock);
  REQUIRE_FALSE(l.ops().empty());
  CHECK(l.ops()[0].queue.a != op.queue.a);
  // Values are cut to the width.
  const CallProgram s = pe.feed(
      Call::vcx_flag_write,
      flag_write(Call::shmem_short_p, FlagOp::Store, kHeap, 0x12345, 0, 2, true));
  CHECK(s.ops()[0].queue.a != op.queue.a);
  CHECK(s.ops()[0].queue.b == 0x2345);
  CHECK(flag_width(s.ops()[0].flags) == 2);
  CHECK_THROWS_WITH(pe.feed(Call::vcx_flag_write,
                            flag_write(Call::shmem_int_p, FlagOp::Store, kHeap, 1, 4)),
                    Contains("vcx: PE 1: shmem_int_p: target PE 4 is outside 0..3"));
}

TEST_CASE("shmem flags: a fetching atomic's value follows from what it fetched",
          "[shmem][flags]") {
  Pe pe(0, 2);
  struct Case {
    Call call;
    FlagOp op;
    std::uint64_t operand, cond, fetched;
    FlagMode mode;
    std::uint64_t stored;
  };
  const Case cases[] = {
      {Call::shmem_int_atomic_fetch_add, FlagOp::Add, 2, 0, 5, kFlagUp, 7},
      {Call::shmem_int_atomic_fetch_add, FlagOp::Add, 0xffffffffULL, 0, 5, kFlagDown, 4},
      {Call::shmem_int_atomic_fetch_add, FlagOp::Add, 0, 0, 5, kFlagNoWrite, 5},
      {Call::shmem_int_atomic_fetch_inc, FlagOp::Add, 1, 0, 0xffffffffULL, kFlagUp, 0},
      {Call::shmem_int_atomic_compare_swap, FlagOp::CompareSwap, 9, 5, 5, kFlagStore, 9},
      {Call::shmem_int_atomic_compare_swap, FlagOp::CompareSwap, 9, 5, 6, kFlagNoWrite, 9},
      {Call::shmem_int_atomic_fetch_or, FlagOp::Or, 4, 0, 3, kFlagStore, 7},
      {Call::shmem_int_atomic_fetch_and, FlagOp::And, 6, 0, 3, kFlagStore, 2},
      {Call::shmem_int_atomic_fetch_xor, FlagOp::Xor, 6, 0, 3, kFlagStore, 5},
  };
  for (const Case& c : cases) {
    INFO("operation " << static_cast<int>(c.op) << " operand " << c.operand << " fetched "
                      << c.fetched);
    const CallProgram a =
        pe.feed(Call::vcx_flag_write, flag_write(c.call, c.op, kHeap, c.operand, 1, 4, true, c.cond));
    REQUIRE(a.ops().size() == 1);
    CHECK(flag_mode(a.ops()[0].flags) == kFlagPending);
    const CallProgram r = pe.feed(Call::vcx_flag_result, FlagResultEvent{a.event_seq(), c.fetched});
    CHECK_FALSE(r.clocked());
    CHECK(r.call() == static_cast<std::uint16_t>(c.call));
    REQUIRE(r.ops().size() == 1);
    const Op& v = r.ops()[0];
    CHECK(v.kind == OpKind::FlagValue);
    CHECK(v.peer == Rank{1});
    CHECK(v.value == a.event_seq());
    CHECK(v.queue.a == a.ops()[0].queue.a);
    CHECK(flag_mode(v.flags) == c.mode);
    if (c.mode != kFlagNoWrite) CHECK(v.queue.b == c.stored);
  }
  // A result belongs to exactly one announcement.
  CHECK_THROWS_WITH(pe.feed(Call::vcx_flag_result, FlagResultEvent{2, 0}),
                    Contains("never announced"));
}

TEST_CASE("shmem flags: a wait that returned is clocked and merges by the value it read",
          "[shmem][flags]") {
  Pe pe(2, 3);
  FlagWaitEvent e{};
  e.addr = kStatic;
  e.value = 0xfffffffffffffffeULL;
  e.cmp = 0;
  e.width = 4;
  e.is_signed = 1;
  const CallProgram w = pe.feed(Call::shmem_int_wait_until, e);
  CHECK(w.clocked());
  REQUIRE(w.ops().size() == 1);
  const Op& op = w.ops()[0];
  CHECK(op.kind == OpKind::FlagWait);
  CHECK(op.peer == Rank{2});
  CHECK(op.queue.b == 0xfffffffeULL);
  // The flag its writers name.
  const CallProgram p = pe.feed(Call::vcx_flag_write,
                                flag_write(Call::shmem_int_p, FlagOp::Store, kStatic, 1, 2));
  CHECK(op.queue.a == p.ops()[0].queue.a);
  CHECK(flag_width(op.flags) == 4);
  CHECK(flag_signed(op.flags));
  const CallProgram t = pe.feed(Call::shmem_ulong_test, e);
  CHECK(t.clocked());
  CHECK(std::string(pe.translator().call_name(t.call())) == "shmem_ulong_test");
}
#endif
