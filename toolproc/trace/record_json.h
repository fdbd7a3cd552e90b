// One clocked call of a trace as a line of JSON (vcx-trace export's JSON
// Lines): rank, seq, event, call, peers, group, queue, messages, enter_ns,
// leave_ns, site, clock; fields without a value are left out.
#pragma once

#include <string>

#include "site_names.h"
#include "vcx/trace_format.h"

namespace vcx::trace {

// `line` becomes the record's JSON object and a newline.
void record_json_line(Rank rank, const Record& record, SiteNames& sites, std::string& line);

}  // namespace vcx::trace
