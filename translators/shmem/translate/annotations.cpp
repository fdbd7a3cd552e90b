// User annotations of OpenSHMEM programs (docs/annotations.md):
// vcx_annotate_shmem_* calls reported by the interceptor's
// vcx_shmem_annotation.
//
// The primitives are those of the MPI forms: a tick is a clocked call
// without primitives; process signals and waits are point-to-point on a
// queue of their own per queue number; resources are kept at their
// deposition PE like locks: a signal deposits (kResourceDeposit), a wait
// fetches (kResourceFetch).
#include <string>

#include "vcx/annotation_ops.h"
#include "shmem_translator.h"

namespace vcx::shmem {
namespace {

constexpr std::uint64_t kAnnotationQueues = 0x53484d454d414e51ULL;  // "SHMEMANQ"
constexpr std::uint64_t kAnnotationResources = 0x53484d454d414e52ULL;  // "SHMEMANR"

std::uint64_t resource_id(std::int64_t resource) {
  return hash_combine(kAnnotationResources, static_cast<std::uint64_t>(resource));
}

}  // namespace

void ShmemTranslator::on_annotate(Call call, const AnnotateEvent& e, ExchangeControl& ctl,
                                  CallProgram& out) {
  out.mark_clocked();
  if (call == Call::vcx_annotate_shmem_tick) return;
  if (e.pe < 0 || static_cast<std::uint32_t>(e.pe) >= world_size_)
    bad(call, "PE " + std::to_string(e.pe) + " is outside 0.." + std::to_string(world_size_ - 1) +
                  "; pass a PE number of the job");
  const Rank peer{static_cast<std::uint32_t>(e.pe)};
  switch (call) {
    case Call::vcx_annotate_shmem_process_signal:
    case Call::vcx_annotate_shmem_process_wait: {
      if (e.id < 0 || e.id > 0x7fffffff)
        bad(call, "queue " + std::to_string(e.id) + " is negative; use a queue >= 0");
      const QueueId q{kAnnotationQueues, static_cast<std::uint64_t>(e.id)};
      if (call == Call::vcx_annotate_shmem_process_signal)
        push_annotated_signal(ctl, peer, q, out);
      else
        push_annotated_wait(ctl, peer, q, out);
      return;
    }
    case Call::vcx_annotate_shmem_resource_signal:
      push_resource_deposit(peer, resource_id(e.id), out);
      return;
    case Call::vcx_annotate_shmem_resource_wait:
      push_resource_fetch(peer, resource_id(e.id), out);
      return;
    default:
      host_.fatal("shmem: unexpected annotation event");
  }
}

}  // namespace vcx::shmem
