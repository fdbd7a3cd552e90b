// Collectives: blocking, non-blocking and persistent forms; neighbourhood
// collectives; intercommunicator collectives (docs/clock-rules.md,
// "Collectives").
#include <algorithm>
#include <string>

#include "mpi_translator.h"

namespace vcx::mpi {
namespace {

// Neighbourhood collectives travel on one point-to-point queue per
// communicator, above every MPI tag. Every member runs the instances in the
// same order and an instance's edges never change, so the n-th signal on an
// edge belongs to the n-th instance: first in, first out is enough.
constexpr std::uint64_t kNeighbourQueue = std::uint64_t{1} << 40;

// Instances of persistent collectives: the initialisation's number above,
// the start's below, and the top bit keeps them apart from the numbers of
// other collectives.
constexpr std::uint64_t kPersistentInstance = std::uint64_t{1} << 63;
constexpr unsigned kStartBits = 32;

struct Role {
  bool participates = true;
  bool signals = false;  // has a signal part (clocked at initiation)
  bool waits = false;    // has a wait part (clocked at completion)
};

}  // namespace

void MpiTranslator::on_collective(Call call, const CollectiveEvent& e, ExchangeControl& ctl,
                                  CallProgram& out) {
  const bool blocking = kCallFamily[static_cast<std::size_t>(call)] == Family::Collective;
  Request r;
  start_collective(call, comm(e.comm), e.root, blocking, ctl, out, r);
  if (!blocking) requests_[e.request] = std::move(r);
}

void MpiTranslator::on_pcollective(Call call, const CollectiveEvent& e) {
  Request r;
  r.persistent = true;
  r.kind = ReqKind::Collective;
  r.call = call;
  r.comm = comm(e.comm);
  r.root = e.root;
  // MPI orders the _init calls of persistent collectives like collective
  // calls, but not their starts (MPI 4.0, 6.13): members may start two
  // persistent collectives in different orders, and the k-th start of a
  // request matches the k-th start of the same request everywhere.
  r.collective_init = ++r.comm->collectives;
  if (r.collective_init >= (kPersistentInstance >> kStartBits))
    host_.fatal("mpi: too many collectives on one communicator");
  requests_[e.request] = std::move(r);
}

void MpiTranslator::start_collective(Call call, const CommPtr& c, std::int32_t root,
                                     bool blocking, ExchangeControl& ctl, CallProgram& out,
                                     Request& req) {
  const CollKind kind = kCallCollKind[static_cast<std::size_t>(call)];
  // Every call of every member counts, so instance numbers agree everywhere.
  std::uint64_t instance = 0;
  if (req.persistent) {
    if (++req.collective_starts >> kStartBits)
      host_.fatal("mpi: a persistent collective started more than 2^32 times");
    instance = kPersistentInstance | req.collective_init << kStartBits | req.collective_starts;
  } else {
    instance = ++c->collectives;
    if (!c->inter) note_collective(*c, instance, call, root);
  }
  req.kind = ReqKind::Collective;
  req.comm = c;
  req.call = call;
  req.root = root;
  req.instance = instance;
  req.neighbour_receives.clear();

  if (kind == CollKind::Neighbor) {
    if (c->inter || !c->topology)
      host_.fatal("mpi: a neighbourhood collective on a communicator without a topology");
    // A persistent one has a queue of its own: its starts keep their
    // order, but not their order among other neighbourhood collectives.
    const QueueId q{c->id.value, kNeighbourQueue + req.collective_init};
    if (!c->out_neighbours.empty()) out.mark_clocked();
    for (const Rank dst : c->out_neighbours) {
      out.push(Op::signal(ctl.reserve_send(dst, q)));
    }
    for (const Rank src : c->in_neighbours) {
      const ReceiveToken t = ctl.new_receive(false);
      ctl.bind_receive(t, src, q);  // instance order, then edge order
      req.neighbour_receives.push_back(t);
    }
    req.coll_waits = !c->in_neighbours.empty();
    if (blocking) complete_collective(req, out);
    return;
  }

  CollectiveRef ref;
  ref.instance = instance;
  ref.operation = operation_of(static_cast<std::uint16_t>(call));
  Role role;
  if (!c->inter) {
    ref.group = c->id;
    const auto n = static_cast<std::int32_t>(c->members.size());
    switch (kind) {
      case CollKind::AllToAll:
        ref.kind = CollectiveKind::AllToAll;
        role.signals = role.waits = true;
        break;
      case CollKind::OneToAll:
      case CollKind::AllToOne: {
        ref.kind = kind == CollKind::OneToAll ? CollectiveKind::OneToAll : CollectiveKind::AllToOne;
        ref.root = world_of(c->members, root);
        const bool is_root = ref.root == self_;
        role.signals = (kind == CollKind::OneToAll) == is_root;
        role.waits = !role.signals;
        break;
      }
      case CollKind::Prefix:
        // The first member signals, the last waits, those between do both;
        // a lone member is first and last.
        ref.kind = CollectiveKind::Prefix;
        role.signals = c->my_rank < n - 1 || n == 1;
        role.waits = c->my_rank > 0 || n == 1;
        break;
      default:
        host_.fatal("mpi: unexpected collective kind");
    }
  } else {
    switch (kind) {
      case CollKind::AllToAll: {
        // Each side waits for the whole other side. Both sides order the
        // two groups the same way: the one holding the lower world rank first.
        const bool local_first = *std::min_element(c->members.begin(), c->members.end()) <
                                 *std::min_element(c->remote.begin(), c->remote.end());
        std::vector<Rank> members = local_first ? c->members : c->remote;
        const auto& second = local_first ? c->remote : c->members;
        const auto split = static_cast<std::uint32_t>(members.size());
        members.insert(members.end(), second.begin(), second.end());
        ref.group = bipartite_group_id(c->id);
        ctl.register_group(ref.group, members, split);
        ref.kind = CollectiveKind::Bipartite;
        role.signals = role.waits = true;
        break;
      }
      case CollKind::OneToAll:
      case CollKind::AllToOne: {
        // The root (MPI_ROOT) and the other group take part; the root's own
        // group's other members (MPI_PROC_NULL) have no part.
        if (root == kRankProcNull) {
          role.participates = false;
          break;
        }
        const bool is_root = root == kRankRoot;
        ref.root = is_root ? self_ : world_of(c->remote, root);
        std::vector<Rank> members{ref.root};
        const auto& others = is_root ? c->remote : c->members;
        members.insert(members.end(), others.begin(), others.end());
        ref.group = rooted_group_id(c->id, ref.root);
        ctl.register_group(ref.group, members);
        ref.kind = kind == CollKind::OneToAll ? CollectiveKind::OneToAll : CollectiveKind::AllToOne;
        role.signals = (kind == CollKind::OneToAll) == is_root;
        role.waits = !role.signals;
        break;
      }
      default:
        host_.fatal("mpi: a scan on an intercommunicator");
    }
  }

  // A member without a part keeps its request a collective one (a persistent
  // request is started again) but has nothing to complete.
  req.coll = role.participates ? ref : CollectiveRef{};
  req.coll_waits = role.waits;
  if (!role.participates) return;
  if (blocking) {
    // One call contributes and completes; every participating member is clocked.
    out.mark_clocked();
    out.push(Op::contribute(ref, kCollectiveBlocking));
    out.push(Op::complete(ref));
    return;
  }
  if (role.signals) out.mark_clocked();
  out.push(Op::contribute(ref));
}

void MpiTranslator::complete_collective(Request& r, CallProgram& out) {
  if (!r.neighbour_receives.empty()) {
    out.mark_clocked();
    for (const ReceiveToken t : r.neighbour_receives) out.push(Op::wait(t));
    r.neighbour_receives.clear();
    return;
  }
  if (r.coll.instance == 0) return;  // a neighbourhood collective without in-neighbours
  if (r.coll_waits) out.mark_clocked();
  out.push(Op::complete(r.coll));
}

}  // namespace vcx::mpi
