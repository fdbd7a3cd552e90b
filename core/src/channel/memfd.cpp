#include "vcx/channel/memfd.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vcx::channel {

bool create_shared_memfd(const char* name, std::size_t bytes, const char* what, int* fd,
                         void** mem, std::string* error) {
  const auto fail = [&](const std::string& step) {
    *error = step + ": " + std::strerror(errno);
    return false;
  };
  const int f = ::memfd_create(name, MFD_CLOEXEC);
  if (f < 0) return fail("memfd_create");
  if (::ftruncate(f, static_cast<off_t>(bytes)) != 0) {
    const bool r = fail(std::string("sizing ") + what);
    ::close(f);
    return r;
  }
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  if (m == MAP_FAILED) {
    const bool r = fail(std::string("mapping ") + what);
    ::close(f);
    return r;
  }
  *fd = f;
  *mem = m;
  return true;
}

void pass_descriptor(msghdr* msg, DescriptorControl* control, int fd) {
  std::memset(control->bytes, 0, sizeof control->bytes);
  msg->msg_control = control->bytes;
  msg->msg_controllen = sizeof control->bytes;
  cmsghdr* c = CMSG_FIRSTHDR(msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

}  // namespace vcx::channel
