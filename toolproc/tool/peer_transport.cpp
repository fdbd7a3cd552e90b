#include "peer_transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "mpi_transport/mpi_transport.h"
#include "vcx/delaying_transport.h"

namespace vcx::tool {
namespace {

// The address other nodes reach this one at: its host name, resolved here
// once (peers connect to addresses, not names). Loopback when the name does
// not resolve.
std::string host_address() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &res) != 0 || !res) return "127.0.0.1";
  char text[INET_ADDRSTRLEN] = {};
  const auto* in = reinterpret_cast<const sockaddr_in*>(res->ai_addr);
  const bool ok = ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr;
  ::freeaddrinfo(res);
  return ok ? text : "127.0.0.1";
}

}  // namespace

PeerLinks::PeerLinks(asio::io_context& io, const ToolOptions& opts, Rank rank,
                     std::uint32_t size) {
  switch (opts.transport) {
    case session::Transport::Mpi:
      transport_ = std::make_unique<MpiTransport>();
      break;
    case session::Transport::Shm: {
      auto shm = std::make_unique<ShmTransport>(io, rank, size, opts.token, opts.session_dir);
      shm_ = shm.get();
      transport_ = std::move(shm);
      break;
    }
    case session::Transport::Tcp: {
      auto tcp = std::make_unique<TcpTransport>(io, rank, size, opts.token);
      tcp_ = tcp.get();
      transport_ = std::move(tcp);
      break;
    }
  }
  if (opts.chaos_delay_us > 0) {
    if (rank.value == 0)
      spdlog::warn("delaying every tool-to-tool message by a random 0..{} us "
                   "(VCX_CHAOS_DELAY_US), seed {}; VCX_CHAOS_SEED={} repeats the delays",
                   opts.chaos_delay_us, opts.chaos_seed, opts.chaos_seed);
    transport_ = std::make_unique<DelayingTransport>(io, std::move(transport_),
                                                     opts.chaos_delay_us, opts.chaos_seed);
  }
}

std::string PeerLinks::listen(const ToolOptions& opts) {
  // Listening on every address (a run across nodes): the others reach this
  // tool by its host name.
  const std::string advertise = opts.bind_host == "0.0.0.0" ? host_address() : opts.bind_host;
  if (tcp_) return tcp_->listen(opts.bind_host, advertise);
  if (shm_) return shm_->listen(opts.bind_host, advertise);
  return {};
}

void PeerLinks::set_peers(std::vector<std::string> endpoints) {
  if (tcp_) tcp_->set_peers(std::move(endpoints));
  if (shm_) shm_->set_peers(endpoints);
}

}  // namespace vcx::tool
