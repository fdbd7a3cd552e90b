// User annotations (docs/annotations.md): vcx_annotate_* calls reported by
// the interceptor's MPI_Pcontrol.
//
// A tick is a clocked call without primitives. Process signals and waits
// are point-to-point on a queue of their own per (communicator, tag),
// above every MPI tag and the queues of neighbourhood collectives and
// PSCW, so they never match a message. Resources are kept at their
// deposition like locks: a signal deposits (kResourceDeposit), a wait
// fetches (kResourceFetch).
#include <string>

#include "vcx/annotation_ops.h"
#include "mpi_translator.h"

namespace vcx::mpi {
namespace {

constexpr std::uint64_t kAnnotationQueue = std::uint64_t{1} << 42;

// Annotated resources share the deposition's table with window locks.
std::uint64_t resource_id(std::int64_t resource) {
  return hash_combine(0x414e4e4f54415445ULL, static_cast<std::uint64_t>(resource));
}

}  // namespace

void MpiTranslator::on_annotate(Call call, const AnnotateEvent& e, ExchangeControl& ctl,
                                CallProgram& out) {
  const char* name = kAnnotationNames[static_cast<std::size_t>(call) -
                                      static_cast<std::size_t>(Call::Annotate_tick)];
  auto bad = [&](const std::string& what) {
    host_.fatal("mpi: rank " + std::to_string(self_.value) + ": " + name + ": " + what);
  };
  if (call == Call::Annotate_tick) {
    out.mark_clocked();
    return;
  }
  // MPI_PROC_NULL makes an annotation do nothing, as it does a send.
  if (e.rank == kRankProcNull) return;
  const CommPtr& c = comm(e.comm);
  if (e.rank < 0 || static_cast<std::size_t>(e.rank) >= c->peers().size())
    bad("rank " + std::to_string(e.rank) + " is not a rank of the communicator (size " +
        std::to_string(c->peers().size()) + "); pass a rank of that communicator");
  const Rank peer = peer_of(*c, e.rank);
  out.mark_clocked();
  switch (call) {
    case Call::Annotate_process_signal:
    case Call::Annotate_process_wait: {
      if (e.id < 0 || e.id > 0x7fffffff)
        bad("queue " + std::to_string(e.id) + " is negative; use a queue (tag) >= 0");
      const QueueId q{c->id.value, kAnnotationQueue | static_cast<std::uint64_t>(e.id)};
      if (call == Call::Annotate_process_signal)
        push_annotated_signal(ctl, peer, q, out);
      else
        push_annotated_wait(ctl, peer, q, out);
      return;
    }
    case Call::Annotate_resource_signal:
      push_resource_deposit(peer, resource_id(e.id), out);
      return;
    case Call::Annotate_resource_wait:
      push_resource_fetch(peer, resource_id(e.id), out);
      return;
    default:
      host_.fatal("mpi: unexpected annotation event");
  }
}

}  // namespace vcx::mpi
