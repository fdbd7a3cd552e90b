// The transport a tool talks to the other tools over, as the run asks for
// it (--transport): TCP, shared memory on one node (TCP between nodes), or
// the tool job's own MPI; wrapped in random delays for testing vcx
// (VCX_CHAOS_DELAY_US).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tool_options.h"
#include "vcx/asio.h"
#include "vcx/shm_transport.h"
#include "vcx/tcp_transport.h"
#include "vcx/transport.h"

namespace vcx::tool {

class PeerLinks {
 public:
  PeerLinks(asio::io_context& io, const ToolOptions& opts, Rank rank, std::uint32_t size);

  ToolTransport& transport() { return *transport_; }
  // Listens for the other tools: the endpoint they reach this one at ("" for
  // the MPI transport, whose peers need none).
  std::string listen(const ToolOptions& opts);
  // Every tool's endpoint, by rank (TCP and shared-memory transports).
  void set_peers(std::vector<std::string> endpoints);

 private:
  std::unique_ptr<ToolTransport> transport_;
  TcpTransport* tcp_ = nullptr;  // transport_'s, when it is TCP
  ShmTransport* shm_ = nullptr;  // transport_'s, when it is shared memory (and TCP)
};

}  // namespace vcx::tool
