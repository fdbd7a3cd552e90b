// Potential deadlocks: a run that finished, replayed from its ranks' call
// logs (call_log.h) as if MPI buffered nothing. The replay keeps what the
// run did — each rank's clocked calls in order, every message's match —
// and lets a rank pass a point only when what it needs has happened:
//
// * it enters a call once the sends it completed just before, in calls
//   that were not clocked (an MPI_Wait of an MPI_Isend), have their
//   receives posted (after its last call: it ends once they have);
// * it completes a call once every message the call received has been
//   sent (the sender entered the call that sent it) and every standard or
//   synchronous send the call completed has its receive posted: the
//   receiver entered the call that posted it (an MPI_Recv), or completed
//   every clocked call before the one that posted it (an MPI_Irecv, which
//   is not clocked — taken as posted as early as that, which errs towards
//   going on);
// * a call that completes a collective instance waits for the members
//   whose part reaches it (every member for a barrier or an allreduce, the
//   root for a broadcast, every member at a reduce's root, the members
//   before it for a scan) to enter the instance — what MPI guarantees, not
//   what it may add (it may synchronise more);
// * everything else (one-sided calls, intercommunicator collectives, groups
//   whose members called different collectives, what a log does not name,
//   what lies past the end of a log) is taken as never holding a rank back.
//
// Ranks only go further when more has happened, so the replay's end is the
// furthest every rank can get without buffering; a rank that stops short
// of the end of its log would wait for ever. The check reports those only
// when nothing else could have released them: none waits in a call that
// returns on any of several completions or in a test (the program could
// have gone another way), and no wait is for a message a receive posted
// for any source took, or for the posting of such a receive (another
// sender or another receive could have matched instead).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "call_log.h"

namespace vcx::deadlock {

struct RankLog {
  std::vector<LogRecord> records;
  std::map<std::uint32_t, std::string> names;  // name_key → call name
};

// What one stuck rank needs and never gets.
struct ZeroBufferNeed {
  enum class Kind : std::uint8_t {
    Message,   // a message `rank` sends in its call `call`
    Receiver,  // `rank` to post the receive its call `call` completes
    Collective,  // `rank` to enter the collective instance in its call `call`
  };
  Kind kind = Kind::Message;
  std::uint32_t rank = 0;
  std::uint64_t call = 0;  // index into that rank's calls
};

struct ZeroBufferStuck {
  std::uint32_t rank = 0;
  std::string call;       // the call it waits in (name)
  std::uint64_t pc = 0;   // its return address, 0 if unknown
  std::vector<ZeroBufferNeed> needs;
};

struct PotentialDeadlock {
  std::vector<ZeroBufferStuck> ranks;  // by rank
};

// `logs[i]` is world rank i's. Collectives on `mismatched` groups (a
// collective mismatch was found there) hold nobody back.
std::optional<PotentialDeadlock> find_potential_deadlock(
    const std::vector<RankLog>& logs, const std::set<std::uint64_t>& mismatched = {});

// A call of a rank's log: its name and return address (for the needs' text).
struct LoggedCall {
  std::string name;
  std::uint64_t pc = 0;
};
LoggedCall logged_call(const RankLog& log, std::uint64_t index);

// Reads <dir>/calls-<rank>.bin and names-<rank>.txt (empty logs for what is
// missing).
std::vector<RankLog> read_logs(const std::string& dir, int ranks);

}  // namespace vcx::deadlock
