// vcx_shmem_annotation: the carrier of OpenSHMEM user annotations
// (annotations/include/vcx/annotate_shmem.h). The header declares it weak and
// calls it only when it resolves, i.e. when this interceptor is preloaded;
// each call becomes one vcx_annotate_shmem_* event.
//
// A process wait stalls like a receive. Resource signals and waits are
// answered in either stall mode, as the MPI forms are: the deposition must
// have registered a deposit before the program acts on it, and a fetch must
// reach the deposition before anything the program does after it, or the
// clocks would depend on the timing of tool messages.
#include <cstdio>

#include "report.h"
#include "vcx/annotate_shmem.h"

using namespace vcx::shmem_intercept;

extern "C" __attribute__((visibility("default"))) void vcx_shmem_annotation(int version, int kind,
                                                                            int pe, long long id) {
  Runtime& rt = runtime();
  if (!rt.active()) return;  // before shmem_init, after shmem_finalize, or without vcx-run
  if (version != VCX_ANNOTATE_SHMEM_VERSION) {
    std::fprintf(stderr,
                 "vcx: PE %d: an annotation from vcx/annotate_shmem.h version %d, but this vcx "
                 "reads version %d; rebuild the program with this vcx's annotate_shmem.h\n",
                 rt.client().world_rank(), version, VCX_ANNOTATE_SHMEM_VERSION);
    pshmem_global_exit(70);
  }
  vcx::shmem::AnnotateEvent ev{};
  ev.id = id;
  ev.pe = pe;
  switch (kind) {
    case VCX_ANNOTATE_TICK:
      rt.push(Call::vcx_annotate_shmem_tick, ev, false);
      return;
    case VCX_ANNOTATE_PROCESS_SIGNAL:
      rt.push(Call::vcx_annotate_shmem_process_signal, ev, false);
      return;
    case VCX_ANNOTATE_PROCESS_WAIT:
      rt.client().wait(rt.push(Call::vcx_annotate_shmem_process_wait, ev, true));
      return;
    case VCX_ANNOTATE_RESOURCE_SIGNAL:
      rt.push_and_wait_always(Call::vcx_annotate_shmem_resource_signal, ev);
      return;
    case VCX_ANNOTATE_RESOURCE_WAIT:
      rt.push_and_wait_always(Call::vcx_annotate_shmem_resource_wait, ev);
      return;
    default:
      std::fprintf(stderr,
                   "vcx: PE %d: vcx_shmem_annotation carries an unknown annotation kind %d; "
                   "annotate only through vcx/annotate_shmem.h\n",
                   rt.client().world_rank(), kind);
      pshmem_global_exit(70);
  }
}
