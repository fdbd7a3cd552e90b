// Shared memory another process can map: an anonymous file (memfd) whose
// descriptor travels over a Unix socket. The application channel and the
// rings between tools are made this way, so nothing is named in /dev/shm
// and nothing outlives the processes holding it.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <string>

namespace vcx::channel {

// A memfd of `bytes`, mapped shared and read-write. On failure `error` says
// which step failed on `what` ("sizing the channel: ...") and nothing stays
// open.
bool create_shared_memfd(const char* name, std::size_t bytes, const char* what, int* fd,
                         void** mem, std::string* error);

// Room for one descriptor in a message's control data.
struct DescriptorControl {
  alignas(cmsghdr) char bytes[CMSG_SPACE(sizeof(int))];
};

// Makes `msg` carry `fd` (SCM_RIGHTS) in `control`, which must outlive the
// sendmsg.
void pass_descriptor(msghdr* msg, DescriptorControl* control, int fd);

}  // namespace vcx::channel
