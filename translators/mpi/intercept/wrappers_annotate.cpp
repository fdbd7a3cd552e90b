// MPI_Pcontrol: the carrier of user annotations (annotations/include/vcx/
// annotate.h). A call with VCX_ANNOTATE_PCONTROL_LEVEL becomes one
// Annotate_* event; every call then goes on to PMPI_Pcontrol with its level
// (MPICH ignores everything after it, and C cannot forward a va_list to a
// variadic function).
//
// A process wait stalls like a receive. Resource signals and waits are
// answered in either stall mode, as MPI_Win_lock is: the tool must have
// granted a deposit before the program can act on it, and a fetch must
// reach the deposition before anything the program does after it, or the
// clocks would depend on the timing of tool messages.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "runtime.h"
#include "vcx/annotate.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;

namespace {

void report_annotation(int kind, int rank, MPI_Comm comm, long long id) {
  Runtime& rt = runtime();
  vcx::mpi::AnnotateEvent ev{};
  ev.comm = comm_handle(comm);
  ev.id = id;
  ev.rank = event_rank(rank);
  switch (kind) {
    case VCX_ANNOTATE_TICK:
      rt.push(Call::Annotate_tick, ev, false);
      return;
    case VCX_ANNOTATE_PROCESS_SIGNAL:
      rt.push(Call::Annotate_process_signal, ev, false);
      return;
    case VCX_ANNOTATE_PROCESS_WAIT:
      rt.wait(rt.push(Call::Annotate_process_wait, ev, true));
      return;
    case VCX_ANNOTATE_RESOURCE_SIGNAL:
    case VCX_ANNOTATE_RESOURCE_WAIT: {
      const Call call = kind == VCX_ANNOTATE_RESOURCE_SIGNAL ? Call::Annotate_resource_signal
                                                             : Call::Annotate_resource_wait;
      if (void* p = rt.begin_always_answered(call, sizeof ev)) {
        std::memcpy(p, &ev, sizeof ev);
        rt.wait_always(rt.commit());
      }
      return;
    }
    default:
      std::fprintf(stderr,
                   "vcx: rank %d: MPI_Pcontrol carries an unknown annotation kind %d; "
                   "annotate only through vcx/annotate.h\n",
                   rt.world_rank(), kind);
      PMPI_Abort(MPI_COMM_WORLD, 70);
  }
}

}  // namespace

extern "C" {

int MPI_Pcontrol(const int level, ...) {
  if (level == VCX_ANNOTATE_PCONTROL_LEVEL && runtime().active()) {
    va_list ap;
    va_start(ap, level);
    const int version = va_arg(ap, int);
    if (version != VCX_ANNOTATE_VERSION) {
      va_end(ap);
      std::fprintf(stderr,
                   "vcx: rank %d: an annotation from vcx/annotate.h version %d, but this vcx "
                   "reads version %d; rebuild the program with this vcx's annotate.h\n",
                   runtime().world_rank(), version, VCX_ANNOTATE_VERSION);
      PMPI_Abort(MPI_COMM_WORLD, 70);
    }
    const int kind = va_arg(ap, int);
    const int rank = va_arg(ap, int);
    const MPI_Comm comm = va_arg(ap, MPI_Comm);
    const long long id = va_arg(ap, long long);
    va_end(ap);
    report_annotation(kind, rank, comm, id);
  }
  return PMPI_Pcontrol(level);
}

}  // extern "C"
