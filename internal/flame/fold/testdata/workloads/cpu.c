/* A CPU-bound C workload for fold fixtures: recursion, a function pointer
 * and a hot leaf, so stacks have depth and several shapes. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long leaf_mix(unsigned long x) {
	for (int i = 0; i < 200; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) static unsigned long walk(int depth, unsigned long x) {
	if (depth == 0)
		return leaf_mix(x);
	return walk(depth - 1, x ^ (unsigned long)depth) + 1; /* not a tail call: keep the frames */
}

__attribute__((noinline)) static unsigned long sort_step(unsigned long x) {
	unsigned long a[64];
	for (int i = 0; i < 64; i++)
		a[i] = leaf_mix(x + i) & 0xffff;
	for (int i = 1; i < 64; i++)
		for (int j = i; j > 0 && a[j - 1] > a[j]; j--) {
			unsigned long t = a[j];
			a[j] = a[j - 1];
			a[j - 1] = t;
		}
	return a[0];
}

typedef unsigned long (*step_fn)(unsigned long);

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 200000;
	step_fn fns[2] = {sort_step, leaf_mix};
	for (long i = 0; i < n; i++) {
		sink += walk((int)(i % 7), (unsigned long)i);
		sink += fns[i & 1]((unsigned long)i);
	}
	printf("%lu\n", sink);
	return 0;
}
