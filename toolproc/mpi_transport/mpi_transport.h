// Tool-to-tool messages over the tool job's own MPI (MPICH), on a duplicate
// of its MPI_COMM_WORLD; the tag names the channel. The application's MPI is
// a different job and never sees these messages.
//
// Sends are MPI_Isend from buffers kept on a free list; arrivals are found
// with MPI_Improbe (any source, any tag), which tells their size, and taken
// with MPI_Imrecv into a buffer from the same list. All receives match any
// source and any tag, so MPI's non-overtaking rule keeps each sender's
// messages in order across channels, and they are delivered in matching
// order. MPI cannot wake an event loop, so the loop calls poll().
//
// The header does not include <mpi.h>: only this library is built against it.
#pragma once

#include <array>
#include <memory>

#include "vcx/transport.h"

namespace vcx {

class MpiTransport final : public ToolTransport {
 public:
  // Collective over MPI_COMM_WORLD, which it duplicates; MPI must be
  // initialised. Throws std::runtime_error when MPI refuses.
  MpiTransport();
  ~MpiTransport() override;

  void set_error_handler(ErrorHandler h) override;
  bool needs_polling() const override { return true; }
  std::size_t poll() override;
  bool flushed() const override;
  // Collective: sends still in flight complete, every tool agrees (a
  // non-blocking barrier) that nobody sends any more, arrivals meanwhile are
  // taken and dropped, then the communicator is freed. Bounded by a deadline
  // so a tool whose peer is gone still ends.
  void close() override;
  const TransportStats& stats() const override;

  void send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) override;
  void set_handler(ToolPart part, Handler h) override;
  Rank self() const override;
  std::uint32_t size() const override;

  // Message buffers made so far: the size the free list grew to.
  std::uint64_t buffers_made() const;
  // Sends not completed yet by MPI.
  std::size_t sends_in_flight() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vcx
