// glibc.c: glibc memcpy bandwidth, 128 MiB onto 128 MiB, in chunks of
// argv[1] bytes (the whole buffer in one call, like mbw -t0, by default).
// GB/s = bytes copied (counted once, as mbw and perflab do) / time.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
	size_t n = 128 << 20, chunk = argc > 1 ? strtoul(argv[1], 0, 0) : n;
	char *a = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *b = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED || chunk == 0 || n % chunk) {
		fprintf(stderr, "usage: glibc [CHUNK dividing 128 MiB]\n");
		return 2;
	}
	memset(a, 1, n); // fault both buffers in before timing
	memset(b, 2, n);
	double best = 0, sum = 0;
	for (int r = 0; r < 10; r++) {
		double t = now();
		for (size_t o = 0; o < n; o += chunk)
			memcpy(b + o, a + o, chunk);
		double g = n / (now() - t) / 1e9;
		sum += g;
		best = g > best ? g : best;
	}
	printf("glibc memcpy, %zu-byte calls: mean %.2f GB/s, best %.2f GB/s\n", chunk, sum / 10, best);
	return 0;
}
