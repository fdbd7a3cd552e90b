/* The random scripts' generator (splitmix64), shared by the MPI and the
 * OpenSHMEM fuzz runners: every rank or PE seeds it with the same SEED and
 * draws every choice, also those about others, so all agree on the script
 * without communicating. */
#ifndef VCX_FUZZ_RNG_H
#define VCX_FUZZ_RNG_H

#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in 0..k-1. */
static inline int pick(int k) { return (int)(rng_next() % (uint64_t)k); }

/* True with probability pct percent. */
static inline int chance(int pct) { return pick(100) < pct; }

#endif
