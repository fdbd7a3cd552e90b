// A zeroed lease table (vcx/channel/lease_table.h) in plain memory, as the
// tool finds it in a fresh channel block, for tests that play either side.
#pragma once

#include <memory>

#include "vcx/channel/lease_table.h"

namespace vcx::sim {

inline std::unique_ptr<channel::LeaseTable> fresh_lease_table() {
  auto t = std::make_unique<channel::LeaseTable>();
  t->slots_used.store(0);
  for (channel::LeaseSlot& s : t->slots) {
    s.word.store(0);
    s.uses.store(0);
  }
  return t;
}

}  // namespace vcx::sim
