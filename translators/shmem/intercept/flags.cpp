// Flags: the writes that may be flags and the waits that return on them
// (docs/clock-rules.md, "Flags"). A write is announced before Open MPI makes
// it and waits until the tool of the PE it writes to has registered it, so
// a wait that sees the write always finds it registered; a wait reports
// what it read and waits until its tool has taken note, so that nothing the
// program does after it can be registered before.
#include "report.h"

namespace vcx::shmem_intercept {

std::uint64_t announce_flag_write(Call call, shmem::FlagOp op, const volatile void* remote,
                                  std::uint64_t operand, std::uint64_t cond, std::size_t width,
                                  bool is_signed, int pe) {
  Runtime& rt = runtime();
  if (!rt.active() || !rt.flag_writes_registered()) return 0;
  shmem::FlagWriteEvent ev{};
  ev.remote = symmetric_address(remote);
  ev.operand = operand;
  ev.cond = cond;
  ev.call = static_cast<std::uint16_t>(call);
  ev.op = op;
  ev.width = static_cast<std::uint8_t>(width);
  ev.is_signed = is_signed ? 1 : 0;
  ev.pe = pe;
  void* p = rt.client().begin_always_answered(
      Model::Shmem, static_cast<std::uint16_t>(Call::vcx_flag_write), sizeof ev);
  if (!p) return 0;
  std::memcpy(p, &ev, sizeof ev);
  const std::uint64_t ticket = rt.client().commit();
  rt.client().wait_always(ticket);
  return ticket;
}

std::uint64_t announce_flag_put(Call call, const volatile void* remote, const void* source,
                                std::size_t bytes, int pe) {
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return 0;
  if (!runtime().active() || !runtime().flag_writes_registered()) return 0;
  std::uint64_t bits = 0;
  std::memcpy(&bits, source, bytes);
  return announce_flag_write(call, shmem::FlagOp::Store, remote, bits, 0, bytes, false, pe);
}

void report_flag_result(std::uint64_t ticket, std::uint64_t fetched) {
  Runtime& rt = runtime();
  if (rt.active()) rt.push(Call::vcx_flag_result, shmem::FlagResultEvent{ticket, fetched}, false);
}

void report_flag_wait(Call call, const volatile void* addr, int cmp, std::uint64_t cmp_value,
                      std::uint64_t value, std::size_t width, bool is_signed) {
  Runtime& rt = runtime();
  if (!rt.active()) return;
  shmem::FlagWaitEvent ev{};
  ev.addr = symmetric_address(addr);
  ev.local_addr = reinterpret_cast<std::uint64_t>(addr);
  ev.cmp_value = cmp_value;
  ev.value = value;
  ev.cmp = cmp;
  ev.width = static_cast<std::uint8_t>(width);
  ev.is_signed = is_signed ? 1 : 0;
  // Without registered writes there is nothing to keep from overtaking the
  // wait's note: it is recorded and the program goes on.
  if (rt.flag_writes_registered())
    rt.push_and_wait_always(call, ev);
  else
    rt.push(call, ev, false);
}

}  // namespace vcx::shmem_intercept
