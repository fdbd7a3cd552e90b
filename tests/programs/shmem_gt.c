#include "shmem_gt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *g_out;
static int g_out_shared;
static int g_pe = -1, g_npes = 0;
/* Acquisitions per lock, at PE 0: static, so symmetric, unless the program
 * gives heap memory (sgt_lock_counters). */
static long g_lock_counts[SGT_MAX_LOCKS];
static long *g_counters = g_lock_counts;

static void sgt_fail(const char *msg) {
  fprintf(stderr, "shmem_gt: PE %d: %s\n", g_pe, msg);
  shmem_global_exit(99);
}

void sgt_init(void) {
  g_pe = shmem_my_pe();
  g_npes = shmem_n_pes();
  const char *dir = getenv("VCX_TEST_GT_DIR");
  if (dir && *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/gt-%d.jsonl", dir, g_pe);
    g_out = fopen(path, "w");
    if (!g_out) sgt_fail("cannot open the ground-truth log");
  }
}

void sgt_init_stream(FILE *out) {
  g_pe = shmem_my_pe();
  g_npes = shmem_n_pes();
  g_out = out;
  g_out_shared = 1;
}

void sgt_finalize(void) {
  if (g_out && !g_out_shared && fclose(g_out) != 0) sgt_fail("cannot close the ground-truth log");
  g_out = NULL;
}

static void line(const char *fmt, ...) {
  if (!g_out) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(g_out, fmt, ap);
  va_end(ap);
  fputc('\n', g_out);
}

void sgt_lock_counters(long *counters) { g_counters = counters; }

int sgt_in_set(int pe, int pe_start, int log_stride, int pe_size) {
  const int d = pe - pe_start;
  return d >= 0 && d % (1 << log_stride) == 0 && (d >> log_stride) < pe_size;
}

static void coll(const char *call, const char *kind, const char *comm, int pe_start,
                 int log_stride, int pe_size, int root) {
  if (!g_out) return;
  if (!sgt_in_set(g_pe, pe_start, log_stride, pe_size)) sgt_fail("a collective outside its set");
  fprintf(g_out, "{\"call\": \"%s\", \"ops\": [{\"op\": \"coll\", \"kind\": \"%s\", \"comm\": \"%s\", "
                 "\"members\": [", call, kind, comm);
  for (int i = 0; i < pe_size; ++i)
    fprintf(g_out, "%s%d", i ? ", " : "", pe_start + (i << log_stride));
  if (root >= 0)
    fprintf(g_out, "], \"root\": %d}]}\n", root);
  else
    fprintf(g_out, "]}]}\n");
}

void sgt_world(const char *call) { coll(call, "all_to_all", "world", 0, 0, g_npes, -1); }

void sgt_set(const char *call, int pe_start, int log_stride, int pe_size) {
  char comm[64];
  snprintf(comm, sizeof comm, "set:%d:%d:%d", pe_start, log_stride, pe_size);
  coll(call, "all_to_all", comm, pe_start, log_stride, pe_size, -1);
}

void sgt_bcast(const char *call, int pe_root, int pe_start, int log_stride, int pe_size) {
  char comm[64];
  snprintf(comm, sizeof comm, "set:%d:%d:%d", pe_start, log_stride, pe_size);
  coll(call, "one_to_all", comm, pe_start, log_stride, pe_size,
       pe_start + (pe_root << log_stride));
}

static long count_acquisition(int id) {
  if (id < 0 || id >= SGT_MAX_LOCKS) sgt_fail("lock id out of range");
  return shmem_long_atomic_fetch_inc(&g_counters[id], 0);
}

void sgt_set_lock(long *lock, int id) {
  shmem_set_lock(lock);
  const long k = count_acquisition(id);
  line("{\"call\": \"shmem_set_lock\", \"ops\": [{\"op\": \"shmem_lock\", \"lock\": \"lock%d\", "
       "\"count\": %ld}]}", id, k);
}

int sgt_test_lock(long *lock, int id) {
  const int rc = shmem_test_lock(lock);
  if (rc != 0) {
    line("{\"call\": \"shmem_test_lock\", \"ops\": []}");
    return rc;
  }
  const long k = count_acquisition(id);
  line("{\"call\": \"shmem_test_lock\", \"ops\": [{\"op\": \"shmem_lock\", \"lock\": \"lock%d\", "
       "\"count\": %ld}]}", id, k);
  return rc;
}

void sgt_clear_lock(long *lock, int id) {
  shmem_clear_lock(lock);
  line("{\"call\": \"shmem_clear_lock\", \"ops\": [{\"op\": \"shmem_unlock\", \"lock\": "
       "\"lock%d\"}]}", id);
}

void sgt_annot_tick(void) {
  line("{\"call\": \"vcx_annotate_shmem_tick\", \"ops\": [{\"op\": \"annot_tick\"}]}");
}

void sgt_annot_signal(int dest, const char *queue) {
  line("{\"call\": \"vcx_annotate_shmem_process_signal\", \"ops\": [{\"op\": "
       "\"annot_signal\", \"dest\": %d, \"queue\": \"%s\"}]}", dest, queue);
}

void sgt_annot_wait(int origin, const char *queue) {
  line("{\"call\": \"vcx_annotate_shmem_process_wait\", \"ops\": [{\"op\": "
       "\"annot_wait\", \"origin\": %d, \"queue\": \"%s\"}]}", origin, queue);
}

void sgt_annot_deposit(const char *resource, int deposition, int ordinal) {
  line("{\"call\": \"vcx_annotate_shmem_resource_signal\", \"ops\": [{\"op\": "
       "\"annot_deposit\", \"resource\": \"%s\", \"deposition\": %d, \"ordinal\": %d}]}",
       resource, deposition, ordinal);
}

void sgt_annot_fetch(const char *resource, int deposition, int seen) {
  line("{\"call\": \"vcx_annotate_shmem_resource_wait\", \"ops\": [{\"op\": "
       "\"annot_fetch\", \"resource\": \"%s\", \"deposition\": %d, \"seen\": %d}]}",
       resource, deposition, seen);
}

void sgt_flag_write(const char *call, const char *flag, int pe, const char *mode,
                    long long value, long long order) {
  line("{\"call\": \"%s\", \"ops\": [{\"op\": \"flag_write\", \"flag\": \"%s\", \"pe\": %d, "
       "\"mode\": \"%s\", \"value\": %lld, \"order\": %lld}]}", call, flag, pe, mode, value, order);
}

void sgt_flag_wait(const char *call, const char *flag, long long value, long long order) {
  line("{\"call\": \"%s\", \"ops\": [{\"op\": \"flag_wait\", \"flag\": \"%s\", \"value\": %lld, "
       "\"order\": %lld}]}", call, flag, value, order);
}

void sgt_unclocked(const char *call) { line("{\"call\": \"%s\", \"ops\": []}", call); }
