// Communicators: world and self at MPI_Init, every constructor, MPI_Comm_free.
// Constructors map to no primitive; they give the translator the members
// (as world ranks), the topology and a run-wide id.
#include <algorithm>
#include <string>

#include "event_payload.h"
#include "mpi_translator.h"

namespace vcx::mpi {

void MpiTranslator::on_init(const InitEvent& e, ExchangeControl& ctl) {
  if (static_cast<std::uint32_t>(e.world_size) != world_size_ ||
      static_cast<std::uint32_t>(e.world_rank) != self_.value)
    host_.fatal("mpi: the application's world does not match the tool job");
  if (!pending_registered_) {
    ctl.add_pending_receives(this);
    pending_registered_ = true;
  }
  auto world = std::make_shared<CommData>();
  world->id = world_comm_id();
  world->members.resize(world_size_);
  for (std::uint32_t r = 0; r < world_size_; ++r) world->members[r] = Rank{r};
  world->my_rank = static_cast<std::int32_t>(self_.value);
  ctl.register_group(world->id, world->members);
  by_id_[world->id] = world;
  comms_[e.comm_world] = world;

  auto self = std::make_shared<CommData>();
  self->id = self_comm_id(self_);
  self->members = {self_};
  self->my_rank = 0;
  ctl.register_group(self->id, self->members);
  by_id_[self->id] = self;
  comms_[e.comm_self] = self;
}

void MpiTranslator::on_comm_create(Call call, const std::uint8_t* payload, std::size_t size,
                                   ExchangeControl& ctl) {
  CommCreateEvent e;
  if (!read_array(payload, size, 0, 1, &e)) host_.fatal("mpi: short communicator event");
  const std::size_t nin = e.nin > 0 ? static_cast<std::size_t>(e.nin) : 0;
  const std::size_t nout = e.nout > 0 ? static_cast<std::size_t>(e.nout) : 0;
  std::vector<std::int32_t> local(e.nlocal), remote(e.nremote), in(nin), out(nout);
  std::size_t off = sizeof e;
  bool ok = read_array(payload, size, off, local.size(), local.data());
  off += local.size() * sizeof(std::int32_t);
  ok = ok && read_array(payload, size, off, remote.size(), remote.data());
  off += remote.size() * sizeof(std::int32_t);
  ok = ok && read_array(payload, size, off, in.size(), in.data());
  off += in.size() * sizeof(std::int32_t);
  ok = ok && read_array(payload, size, off, out.size(), out.data());
  if (!ok) host_.fatal("mpi: truncated communicator event");

  auto to_world = [&](const std::vector<std::int32_t>& ranks) {
    std::vector<Rank> w;
    w.reserve(ranks.size());
    for (const std::int32_t r : ranks) {
      if (r < 0 || static_cast<std::uint32_t>(r) >= world_size_)
        host_.fatal("mpi: a new communicator names world rank " + std::to_string(r));
      w.push_back(Rank{static_cast<std::uint32_t>(r)});
    }
    return w;
  };

  // How the members agree on the new communicator's id: by counting the
  // constructor calls of the context they all take part in.
  const CommPtr& parent = comm(e.parent);
  std::vector<Rank> members = e.same_group ? parent->members : to_world(local);
  std::vector<Rank> remote_w = e.same_group ? parent->remote : to_world(remote);
  GroupId id;
  switch (e.context) {
    case CommContext::Parent: {
      const std::uint64_t n = ++parent->constructions;
      if (e.is_null) return;
      Rank lowest = *std::min_element(members.begin(), members.end());
      if (!remote_w.empty())
        lowest = std::min(lowest, *std::min_element(remote_w.begin(), remote_w.end()));
      id = derived_comm_id(parent->id, n, lowest);
      break;
    }
    case CommContext::Group: {
      const std::uint64_t key =
          hash_combine(ranks_key(members), static_cast<std::uint32_t>(e.tag));
      id = group_comm_id(ranks_key(members), e.tag, ++context_counts_[key]);
      break;
    }
    case CommContext::Intercomm: {
      if (members.empty() || remote_w.empty()) host_.fatal("mpi: an intercommunicator without groups");
      const bool local_low = *std::min_element(members.begin(), members.end()) <
                             *std::min_element(remote_w.begin(), remote_w.end());
      const std::uint64_t low = ranks_key(local_low ? members : remote_w);
      const std::uint64_t high = ranks_key(local_low ? remote_w : members);
      const std::uint64_t key =
          hash_combine(hash_combine(low, high), static_cast<std::uint32_t>(e.tag));
      id = intercomm_id(low, high, e.tag, ++context_counts_[key]);
      break;
    }
    default:
      host_.fatal("mpi: unknown communicator context");
  }
  if (e.is_null) return;
  if (members.empty()) host_.fatal("mpi: a new communicator without members");

  auto c = std::make_shared<CommData>();
  c->id = id;
  c->members = std::move(members);
  c->remote = std::move(remote_w);
  c->inter = !c->remote.empty();
  for (std::size_t i = 0; i < c->members.size(); ++i)
    if (c->members[i] == self_) c->my_rank = static_cast<std::int32_t>(i);
  if (c->my_rank < 0) host_.fatal("mpi: this rank is not a member of its new communicator");
  if (e.same_group) {
    // A duplicate keeps its parent's topology.
    c->topology = parent->topology;
    c->in_neighbours = parent->in_neighbours;
    c->out_neighbours = parent->out_neighbours;
  } else if (e.nin >= 0) {
    c->topology = true;
    for (const std::int32_t r : in)
      if (r != kRankProcNull) c->in_neighbours.push_back(world_of(c->members, r));
    for (const std::int32_t r : out)
      if (r != kRankProcNull) c->out_neighbours.push_back(world_of(c->members, r));
  }
  if (!c->inter) ctl.register_group(c->id, c->members);
  (void)call;
  by_id_[c->id] = c;
  comms_[e.newcomm] = std::move(c);
}

void MpiTranslator::on_comm_free(const CommFreeEvent& e) {
  // Pending requests keep their communicator alive through their pointer.
  comms_.erase(e.comm);
}

}  // namespace vcx::mpi
