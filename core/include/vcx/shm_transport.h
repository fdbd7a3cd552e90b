// Tool-to-tool messages through shared memory between tools on one node,
// and over TCP (an inner TcpTransport) to tools on other nodes.
//
// Each ordered pair of tools on a node gets a single-producer/single-consumer
// byte ring, created by the sender on its first message (a memfd, so nothing
// named outlives the tools) and handed to the receiver over the receiver's
// doorbell: a Unix datagram socket in the session directory that the
// receiver's event loop waits on. A sender rings the doorbell only when the
// receiver announced that it sleeps, so a busy receiver costs no system
// call; a receiver rings a sender's doorbell when it has drained a ring the
// sender waits to write into. Which path a pair takes is decided once, from
// the node identities the tools publish with their endpoints, so the order
// per pair holds.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vcx/asio.h"
#include "vcx/shm_ring.h"
#include "vcx/tcp_transport.h"
#include "vcx/transport.h"

namespace vcx {

// "<host name>/<boot id>": equal for two processes exactly when they run on
// the same booted machine. Empty when the machine does not tell.
std::string local_node_id();

class ShmTransport final : public ToolTransport {
 public:
  // Bytes of ring data per ordered pair; a message larger than a quarter of
  // it goes in several chunks.
  static constexpr std::size_t kDefaultRingBytes = 128 * 1024;

  // `doorbell_dir` holds this tool's doorbell socket (the session
  // directory). `node_id` is what local_node_id() returns, unless a test
  // pretends to be on another node.
  ShmTransport(asio::io_context& io, Rank self, std::uint32_t size, std::string token,
               std::string doorbell_dir, std::string node_id = local_node_id(),
               std::size_t ring_bytes = kDefaultRingBytes);
  ~ShmTransport() override;

  // Listens for TCP peers (as TcpTransport::listen) and binds the doorbell.
  // Returns "<host:port> <pid> <node id>" for the others.
  std::string listen(const std::string& bind_host, const std::string& advertise_host);
  // Endpoints of every tool, indexed by rank (from listen() on each). Peers
  // with this tool's node identity are reached through shared memory.
  void set_peers(const std::vector<std::string>& endpoints);

  void send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) override;
  void set_handler(ToolPart part, Handler h) override;
  Rank self() const override { return self_; }
  std::uint32_t size() const override { return size_; }

  void set_error_handler(ErrorHandler h) override;
  // Delivers what the rings hold and flushes queues that waited for room.
  // Costs a load per incoming ring when nothing arrived.
  std::size_t poll() override;
  bool prepare_sleep() override;
  void end_sleep() override;
  bool flushed() const override;
  void close() override;
  const TransportStats& stats() const override;

  // True when messages to `peer` go through shared memory.
  bool shares_node_with(Rank peer) const;

 private:
  struct Peer;
  struct OutRing;
  struct InRing;

  OutRing* out_ring(Rank dst);
  bool write_chunks(OutRing& o, ToolPart part, const std::uint8_t* data, std::uint32_t len,
                    std::uint32_t& done);
  bool flush(OutRing& o);
  void flush_blocked();
  void queue(OutRing& o, ToolPart part, const std::uint8_t* data, std::uint32_t len,
             std::uint32_t done);
  bool send_attach(OutRing& o);
  void retry_attaches_later();
  std::size_t drain(InRing& in, std::size_t at_most);
  void ring_doorbell(Rank peer);
  void arm_doorbell();
  void read_doorbell();
  void attach(Rank src, int memfd);
  void watch_peer(Rank peer);
  void peer_lost(Rank peer, const std::string& what);
  void report(Rank peer, const std::string& what);
  void deliver(Rank src, ToolPart part, std::span<const std::uint8_t> payload);

  asio::io_context& io_;
  Rank self_;
  std::uint32_t size_;
  std::string token_;
  std::string doorbell_dir_;
  std::string node_id_;
  std::size_t ring_bytes_;
  TcpTransport tcp_;
  std::vector<Peer> peers_;
  std::unique_ptr<asio::posix::stream_descriptor> doorbell_;
  int sender_fd_ = -1;  // unbound datagram socket that rings the others
  std::vector<InRing*> in_list_;  // attached incoming rings, for polling
  std::vector<OutRing*> blocked_;  // outgoing rings with queued messages
  asio::steady_timer attach_retry_;
  bool attach_retry_armed_ = false;
  std::array<Handler, kToolParts> handlers_;
  ErrorHandler on_error_;
  bool polling_ = false;
  bool closing_ = false;
  TransportStats own_;
  mutable TransportStats merged_;
  // Lets completions that outlive this object see that it did.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace vcx
