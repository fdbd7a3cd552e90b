// The OpenSHMEM translator: raw OpenSHMEM events → exchange primitives
// (docs/clock-rules.md, "OpenSHMEM").
//
// * Collectives run over their active set (PE_start, logPE_stride,
//   PE_size), or over every PE for shmem_barrier_all, shmem_sync_all and
//   the symmetric heap calls: all-to-all, or one-to-all from the root for
//   broadcasts. Each active set is a group of its own, numbered the same on
//   every PE, and its k-th collective call is the k-th instance everywhere.
// * Locks are resources at a deposition chosen from the lock's symmetric
//   address: a release deposits its clock, an acquisition fetches every
//   deposit so far (the interceptor orders both around Open MPI's own lock,
//   wrappers_lock.cpp).
// * Data calls (put, get, atomics) and fence/quiet are recorded, not
//   clocked.
// * User annotations (vcx_annotate_shmem_*) map as the MPI forms do:
//   process signals and waits on queues of their own, resources at their
//   deposition PE (annotations.cpp).
// * Flags (flags.cpp; docs/clock-rules.md, "Flags"): writes that may be
//   flags are registered at the PE they write to before they happen
//   (FlagWrite, then FlagValue for fetching atomics); a wait_until, wait or
//   successful test merges the registered writes its value says came
//   before it (FlagWait, clocked).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "shmem_calls.h"
#include "vcx/plugin.h"
#include "vcx/translator.h"

namespace vcx::shmem {

class ShmemTranslator final : public Translator, public Plugin {
 public:
  explicit ShmemTranslator(ToolHost& host);

  Translator* translator() override { return this; }

  Model model() const override { return Model::Shmem; }
  const char* call_name(std::uint16_t call) const override;
  void translate(const EventHeader& ev, ExchangeControl& ctl, CallProgram& out) override;
  // For the deadlock analysis (wait_states.cpp).
  bool wait_state(const channel::BlockedCall& call, WaitState* out) override;
  void wait_facts(WaitFacts* out) const override;

  // The run-wide id of an active set, and of the lock at a symmetric address.
  static GroupId set_id(std::int32_t pe_start, std::int32_t log_stride, std::int32_t pe_size);
  static std::uint64_t lock_id(const SymAddr& lock);
  static std::uint64_t flag_id(const SymAddr& flag);

 private:
  template <class T>
  T payload(const EventHeader& ev) const;
  void bad(Call call, const std::string& what) const;  // ends the tool job

  void on_init(const InitEvent& e);
  void on_collective(Call call, const CollectiveEvent& e, bool one_to_all, ExchangeControl& ctl,
                     CallProgram& out);
  void on_lock(Call call, const LockEvent& e, CallProgram& out);
  void on_data(Call call, const DataEvent& e, CallProgram& out);
  // Notes for the analyses (vcx/analysis.h; accesses.cpp): the remote side
  // of data calls, and the calls that complete them.
  bool notes_wanted();
  void note_access(Call call, const DataEvent& e, CallProgram& out);
  void complete_accesses(std::uint64_t ctx, bool every_context, CallProgram& out,
                         std::uint64_t pc = 0);
  void note_completion(Call call, const CompletionEvent& e, CallProgram& out);
  void note_local_accesses(const EventHeader& ev, CallProgram& out);
  void note_flag_observed(const FlagWaitEvent& e, CallProgram& out);
  // Collectives that include a shmem_barrier_all or shmem_barrier (the
  // barriers, the symmetric heap calls) complete this PE's data calls.
  bool completes_data(Call call) const;
  void on_annotate(Call call, const AnnotateEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_flag_write(std::uint64_t seq, const FlagWriteEvent& e, CallProgram& out);
  void on_flag_result(const FlagResultEvent& e, CallProgram& out);
  void on_flag_wait(Call call, const FlagWaitEvent& e, CallProgram& out);

  // The active set's members in world ranks (into `out` unless null);
  // false if it names PEs outside the world.
  bool set_members(const CollectiveEvent& e, std::vector<Rank>* out) const;

  ToolHost& host_;
  Rank self_;
  std::uint32_t world_size_;
  bool started_ = false;
  std::unordered_set<GroupId> registered_;
  std::unordered_map<GroupId, std::uint64_t> instances_;
  // Locks this PE holds (lock_id), for others' waits on them.
  std::vector<std::uint64_t> locks_held_;
  bool finalized_ = false;  // shmem_finalize reported
  // Announced fetching atomics whose result is still to come, by the
  // announcement's event seq.
  std::unordered_map<std::uint64_t, FlagWriteEvent> announced_;
  // Accesses not complete yet: id and context.
  struct OpenAccess {
    std::uint64_t id;
    std::uint64_t ctx;
    bool remote_write;     // a write of another PE's memory: a fence orders it
    bool ordered = false;  // an Ordered note named it already
  };
  std::vector<OpenAccess> open_;
  std::vector<std::uint64_t> ordered_;  // scratch of note_completion
  std::uint64_t next_access_id_ = 0;
  int notes_wanted_ = -1;
};

}  // namespace vcx::shmem
