/* Under vcx-run, peers that are not this rank's application knock on its
 * tool process, where the tool published its channel in the session
 * directory (the Unix socket tool-<rank>.sock, or the TCP endpoint in
 * tool-<rank>.tcp): a hello with a wrong session token, a connection that
 * sends garbage, and one that connects and never says anything. They come
 * before the rank attaches (before MPI_Init) and while its channel is in
 * use. Each must be refused with the right status, and the run must go on
 * as if they had not been there: same output, exact clocks.
 *
 * Natively (VCX_SESSION_DIR unset) only the communication runs. The hello
 * and reply layouts are those of core/include/vcx/channel/attach.h, written
 * out here on purpose: this is what a stranger on the network would send. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "gt.h"

#define MSG 8

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static unsigned long sum;

enum { kHelloBytes = 96, kReplyBytes = 256, kBadVersion = 1, kBadToken = 2 };

/* Connects to this rank's tool, whichever channel it published; -1 when
 * there is no tool (a native run). vcx-run starts the application beside
 * its tools, so before MPI_Init the tool may not have published yet: wait
 * for it (up to a minute), as a stranger would. */
static int connect_to_tool(int rank) {
  const char *dir = getenv("VCX_SESSION_DIR");
  if (!dir || !*dir) return -1;
  char path[512], sock_path[512];
  snprintf(path, sizeof path, "%s/tool-%d.tcp", dir, rank);
  snprintf(sock_path, sizeof sock_path, "%s/tool-%d.sock", dir, rank);
  for (int waited_ms = 0; access(path, F_OK) != 0 && access(sock_path, F_OK) != 0;
       waited_ms += 5) {
    if (waited_ms >= 60000) gt_fail("the tool of rank %d published no channel", rank);
    usleep(5000);
  }
  FILE *f = fopen(path, "r");
  if (f) {
    char endpoint[256] = {0};
    if (!fgets(endpoint, sizeof endpoint, f)) gt_fail("empty endpoint file %s", path);
    fclose(f);
    endpoint[strcspn(endpoint, "\n")] = '\0';
    char *colon = strrchr(endpoint, ':');
    if (!colon) gt_fail("malformed endpoint '%s'", endpoint);
    *colon = '\0';
    char *host = endpoint;
    if (host[0] == '[') {
      ++host;
      host[strlen(host) - 1] = '\0';
    }
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || !ai) gt_fail("cannot resolve %s", host);
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0)
      gt_fail("cannot connect to the tool's endpoint: %s", strerror(errno));
    freeaddrinfo(ai);
    return fd;
  }
  snprintf(path, sizeof path, "%s/tool-%d.sock", dir, rank);
  struct sockaddr_un a = {0};
  a.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof a.sun_path) gt_fail("socket path too long: %s", path);
  memcpy(a.sun_path, path, strlen(path) + 1);
  /* The socket file appears when it is bound, a moment before it listens. */
  for (int waited_ms = 0;; waited_ms += 5) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) gt_fail("socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
    const int err = errno;
    close(fd);
    if (err != ECONNREFUSED || waited_ms >= 60000)
      gt_fail("cannot connect to the tool's socket %s: %s", path, strerror(err));
    usleep(5000);
  }
}

static void send_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t k = send(fd, p, len, MSG_NOSIGNAL);
    if (k <= 0) gt_fail("sending to the tool failed: %s", strerror(errno));
    p += k;
    len -= (size_t)k;
  }
}

/* Sends `hello` and returns the status of the tool's answer; the tool must
 * then close the connection. */
static uint32_t knock(int rank, const unsigned char *hello) {
  int fd = connect_to_tool(rank);
  send_all(fd, hello, kHelloBytes);
  unsigned char reply[kReplyBytes];
  size_t got = 0;
  while (got < sizeof reply) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 60000) != 1) gt_fail("the tool did not answer an intruder");
    ssize_t k = recv(fd, reply + got, sizeof reply - got, 0);
    if (k <= 0) gt_fail("the tool closed without answering an intruder");
    got += (size_t)k;
  }
  char b;
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, 60000) != 1 || recv(fd, &b, 1, 0) != 0)
    gt_fail("the tool kept an intruder's connection open");
  close(fd);
  uint32_t status;
  memcpy(&status, reply + 8, sizeof status);
  return status;
}

static void hello_for(unsigned char *h, int rank, const char *token) {
  const uint64_t magic = 0x3130484354415856ULL; /* "VXATCH01" */
  const uint32_t version = 4, /* kAttachVersion, vcx/channel/attach.h */
                 world_rank = (uint32_t)rank, world_size = (uint32_t)n;
  const int32_t pid = (int32_t)getpid();
  memset(h, 0, kHelloBytes);
  memcpy(h, &magic, 8);
  memcpy(h + 8, &version, 4);
  memcpy(h + 12, &world_rank, 4);
  memcpy(h + 16, &world_size, 4);
  memcpy(h + 20, &pid, 4);
  snprintf((char *)h + 32, 64, "%s", token);
}

static void intrude(int rank) {
  if (!getenv("VCX_SESSION_DIR")) return;
  unsigned char h[kHelloBytes];
  hello_for(h, rank, "not-the-session-token");
  uint32_t st = knock(rank, h);
  if (st != kBadToken) gt_fail("a wrong token got status %u, not 'wrong session token'", st);
  for (int i = 0; i < kHelloBytes; ++i) h[i] = (unsigned char)(i * 37 + 11);
  st = knock(rank, h);
  if (st != kBadVersion) gt_fail("garbage got status %u, not 'protocol version mismatch'", st);
}

static void ring(int tag, const char *mode) {
  int sb[MSG], rb[MSG];
  int right = (me + 1) % n, left = (me - 1 + n) % n;
  if (me == 0) {
    gt_send(mode, sb, MSG, right, tag, W);
    sum += gt_recv(rb, MSG, left, tag, W, NULL);
  } else {
    sum += gt_recv(rb, MSG, left, tag, W, NULL);
    gt_send(mode, sb, MSG, right, tag, W);
  }
}

int main(int argc, char **argv) {
  /* Before MPI_Init the rank is known from the process manager only. */
  const char *pmi_rank = getenv("PMI_RANK");
  const char *pmi_size = getenv("PMI_SIZE");
  int early_rank = pmi_rank ? atoi(pmi_rank) : 0;
  n = pmi_size ? atoi(pmi_size) : 1;
  int silent = -1;
  if (pmi_rank) {
    intrude(early_rank);
    silent = connect_to_tool(early_rank); /* says nothing, stays open */
  }

  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  if (pmi_rank && me != early_rank) gt_fail("PMI_RANK %d is not the world rank %d", early_rank, me);

  ring(1, "std");
  ring(2, "sync");
  intrude(me); /* while the rank's own channel is in use */
  ring(3, "sync");
  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  intrude(me);
  ring(4, "std");
  if (silent >= 0) close(silent);

  printf("channel_intruder rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
