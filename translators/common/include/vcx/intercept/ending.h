// How an application rank ends when it does not end through its model's
// finalisation (MPI_Finalize, shmem_finalize), for vcx-run's report: the
// interceptor writes one line to <session>/ending-<world rank> as the rank
// goes:
//   "abort <code>"   the program called MPI_Abort or shmem_global_exit
//   "exit <status>"  the process exited without finalising its model
//   "signal <n>"     a signal the process can catch killed it
//   "tool-failed 70 [call]" the interceptor aborted the job: its tool
//                    process failed (while the rank was in `call`)
// A rank killed by SIGKILL leaves no line; its tool still sees it vanish.
#pragma once

namespace vcx::intercept {

// Prepares the file name and installs the exit hook and the signal handlers
// (each chains to the handler it replaces, so the program and its library
// see their signals as before). Called once, when the model starts under
// vcx-run.
void watch_ending(const char* session_dir, int world_rank);

// Writes the line; the first one written wins (an abort that exits must
// not be recorded as an exit). `call`, if given, names the call the rank
// was in (a C identifier). Async-signal-safe.
void record_ending(const char* kind, int code, const char* call = nullptr);

// The model's finalisation began: exiting from now on is the normal end.
void ending_finalized();

// Whether the tool of another application rank saw that rank end without
// finalising (it leaves <session>/app-failed before the tools stop).
bool another_rank_ended(const char* session_dir);

}  // namespace vcx::intercept
