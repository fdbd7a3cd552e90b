// A vcx trace as an OTF2 archive (the format of Score-P, read by Vampir,
// Scalasca, otf2-print and the OTF2 reader library), written with OTF2's
// writer API.
#pragma once

#include <cstdint>
#include <string>

#include "trace_set.h"

namespace vcx::trace {

struct Otf2Summary {
  std::uint64_t events = 0;     // OTF2 event records written
  std::uint64_t messages = 0;   // MpiSend and MpiRecv records
  // Messages that are no application message (user annotations, the
  // synchronisation of windows): they have no OTF2 record; the order they
  // make is in the vector clocks.
  std::uint64_t messages_left_out = 0;
  std::string anchor;           // the archive's .otf2 file
};

// Writes `trace` into the new directory `out` as the archive
// `out/traces.otf2` (+ traces.def, traces/). Locations are the ranks (one
// process, one thread each), regions the calls, communicators the groups the
// trace defines; every call is Enter/Leave with its point-to-point messages
// (MpiSend at the enter, MpiRecv at the return, each with the attribute
// vcx::message_position that pairs it with its other end), collectives as
// MpiCollectiveBegin/End, window synchronisation as RmaCollectiveBegin/End;
// the Leave carries the call's vector clock (attributes vcx::clock[k], the
// non-zero entries) and the Enter its seq and source line (vcx::seq,
// vcx::site). Throws TraceError.
Otf2Summary write_otf2(const TraceSet& trace, const std::string& out,
                       const std::string& maps_dir);

}  // namespace vcx::trace
