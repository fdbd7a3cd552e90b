// Flags: synchronisation through memory (docs/clock-rules.md, "Flags").
//
// A write that may be a flag (p, a put of 1, 2, 4 or 8 bytes, set, swap, the
// fetching atomics) is announced by the interceptor before Open MPI makes
// it: a FlagWrite op registers it at the tool of the PE it writes to. What
// it stores is known then for stores; a fetching atomic's follows from what
// it fetched (FlagValue, from the result event): fetch_add and fetch_inc
// are counter steps up or down, compare-and-swap stores its value if it
// found cond (else it wrote nothing), fetch_and/or/xor store what they
// computed. A wait_until, wait, or test that returned 1 is a clocked call
// whose FlagWait merges the registered writes of the value it read.
#include <string>

#include "shmem_translator.h"

namespace vcx::shmem {
namespace {

constexpr std::uint64_t kFlagSeed = 0x53484d454d464c47ULL;  // "SHMEMFLG"

std::uint64_t mask_of(unsigned width) {
  return width >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
}

std::int64_t sign_extend(std::uint64_t v, unsigned width) {
  if (width >= 8) return static_cast<std::int64_t>(v);
  const unsigned shift = 64 - 8 * width;
  return static_cast<std::int64_t>(v << shift) >> shift;
}

bool valid_width(unsigned w) { return w == 1 || w == 2 || w == 4 || w == 8; }

}  // namespace

std::uint64_t ShmemTranslator::flag_id(const SymAddr& flag) {
  return hash_combine(hash_combine(kFlagSeed, flag.object), flag.offset);
}

void ShmemTranslator::on_flag_write(std::uint64_t seq, const FlagWriteEvent& e, CallProgram& out) {
  const Call call = e.call < static_cast<std::uint16_t>(Call::Count) ? static_cast<Call>(e.call)
                                                                     : Call::vcx_flag_write;
  if (call == Call::vcx_flag_write || kCallFamily[e.call] != Family::Data)
    host_.fatal("shmem: a flag write announced by a call that writes nothing "
                "(interceptor and translator from different vcx versions?)");
  out.set_call(static_cast<std::uint16_t>(call));
  if (e.pe < 0 || static_cast<std::uint32_t>(e.pe) >= world_size_)
    bad(call, "target PE " + std::to_string(e.pe) + " is outside 0.." +
                  std::to_string(world_size_ - 1));
  if (!valid_width(e.width) || e.op > FlagOp::CompareSwap)
    host_.fatal("shmem: a malformed flag write (interceptor and translator from different vcx "
                "versions?)");
  const std::uint64_t mask = mask_of(e.width);
  const Rank pe{static_cast<std::uint32_t>(e.pe)};
  // `seq` names the write at its deposition, together with this PE.
  if (e.op == FlagOp::Store) {
    out.push(Op::flag_write(pe, flag_id(e.remote), e.operand & mask, seq,
                            flag_bits(kFlagStore, e.width, e.is_signed != 0)));
  } else {
    out.push(Op::flag_write(pe, flag_id(e.remote), 0, seq,
                            flag_bits(kFlagPending, e.width, e.is_signed != 0)));
    announced_[seq] = e;
  }
  // For the analyses a flag write is a synchronisation point of its own:
  // what completed before it (a quiet, a blocking get) must be ordered
  // before the wait that reads the flag, so the write's clock carries a
  // tick of its own (only with analyses: the clocks of runs without them
  // stay as clock-rules.md says).
  if (notes_wanted()) out.mark_clocked();
}

void ShmemTranslator::on_flag_result(const FlagResultEvent& e, CallProgram& out) {
  auto it = announced_.find(e.announce);
  if (it == announced_.end())
    host_.fatal("shmem: the result of a fetching atomic that was never announced "
                "(interceptor and translator from different vcx versions?)");
  const FlagWriteEvent w = it->second;
  announced_.erase(it);
  out.set_call(w.call);
  const std::uint64_t mask = mask_of(w.width);
  const std::uint64_t fetched = e.fetched & mask;
  std::uint64_t stored = 0;
  FlagMode mode = kFlagStore;
  switch (w.op) {
    case FlagOp::Add: {
      // A counter step: its sign, read in the type's width, says which way.
      const std::int64_t step = sign_extend(w.operand & mask, w.width);
      stored = (fetched + w.operand) & mask;
      mode = step > 0 ? kFlagUp : step < 0 ? kFlagDown : kFlagNoWrite;
      break;
    }
    case FlagOp::And: stored = fetched & w.operand & mask; break;
    case FlagOp::Or: stored = (fetched | w.operand) & mask; break;
    case FlagOp::Xor: stored = (fetched ^ w.operand) & mask; break;
    case FlagOp::CompareSwap:
      stored = w.operand & mask;
      if (fetched != (w.cond & mask)) mode = kFlagNoWrite;
      break;
    case FlagOp::Store: stored = w.operand & mask; break;
  }
  out.push(Op::flag_value(Rank{static_cast<std::uint32_t>(w.pe)}, flag_id(w.remote), stored,
                         e.announce, flag_bits(mode, w.width, w.is_signed != 0)));
}

void ShmemTranslator::on_flag_wait(Call call, const FlagWaitEvent& e, CallProgram& out) {
  if (!valid_width(e.width))
    host_.fatal("shmem: a malformed flag wait (interceptor and translator from different vcx "
                "versions?)");
  out.mark_clocked();
  out.push(Op::flag_wait(self_, flag_id(e.addr), e.value & mask_of(e.width),
                        flag_bits(kFlagPending, e.width, e.is_signed != 0)));
  note_flag_observed(e, out);
  (void)call;
}

}  // namespace vcx::shmem
