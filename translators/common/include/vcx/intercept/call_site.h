// Where the application called: the return address of the outermost frame
// of this interceptor, found by walking the frame-pointer chain from the
// function that asks. The tool resolves it to file:line for its messages
// and traces.
//
// Every function of the interceptor keeps a frame pointer
// (-fno-omit-frame-pointer), so the chain is sound up to the wrapper the
// application called; the walk stops at the first return address outside
// the interceptor and never reads a frame of other code. A few loads per
// event.
#pragma once

#include <cstdint>

namespace vcx::intercept {

// The return address, in the calling code, of the interceptor's outermost
// frame on this thread's stack; 0 when it is not found within a bounded
// number of frames. The code that called may be a library between the
// application and the interceptor (MPICH's Fortran bindings).
std::uint64_t application_call_site();

// Whether `pc` is code of this interceptor (for tests).
bool in_this_interceptor(std::uint64_t pc);

}  // namespace vcx::intercept
