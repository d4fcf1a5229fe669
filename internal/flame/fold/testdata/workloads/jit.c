/* A tiny JIT: it copies machine code into an executable mapping and
 * writes /tmp/perf-PID.map, the convention JVMs (perf-map-agent), V8 and
 * LuaJIT use, so perf resolves the JIT frames by name. Java-style names
 * exercise the Java tidying. x86-64 only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* mov ecx, imm32 ; loop: dec ecx ; jnz loop ; ret */
static const unsigned char spin[] = {0xb9, 0x00, 0x00, 0x04, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3};

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 3000;
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) return 1;
	memcpy(code, spin, sizeof spin);
	memcpy(code + 64, spin, sizeof spin);
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", getpid());
	FILE *m = fopen(path, "w");
	if (!m) return 1;
	fprintf(m, "%lx %zx Lcom/example/Handshake;.processMessage(BI)V\n", (unsigned long)code, sizeof spin);
	fprintf(m, "%lx %zx LazyCompiled:*render /srv/app.js:42\n", (unsigned long)(code + 64), sizeof spin);
	fclose(m);
	void (*a)(void) = (void (*)(void))code;
	void (*b)(void) = (void (*)(void))(code + 64);
	for (long i = 0; i < n; i++) { a(); if (i % 3 == 0) b(); }
	return 0;
}
