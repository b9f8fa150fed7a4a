/*
 * The fuzzers' random numbers: splitmix64 from a seed the harness sets (rng_state), so a run is reproducible from
 * the seed it prints. One copy for every harness of sim/fuzz.
 */
#ifndef FUZZ_RNG_H_
#define FUZZ_RNG_H_

#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
