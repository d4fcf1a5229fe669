// A C++ workload whose symbols exercise name tidying: templates with
// parentheses inside angle brackets, an anonymous namespace, lambdas and
// std::function.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <vector>

namespace {
__attribute__((noinline)) unsigned long churn(unsigned long x) {
	for (int i = 0; i < 300; i++) x = x * 2862933555777941757UL + 3037000493UL;
	return x;
}
}  // namespace

template <typename F>
__attribute__((noinline)) unsigned long apply(F f, unsigned long x) { return f(x); }

struct Box {
	std::map<unsigned long, unsigned long> m;
	__attribute__((noinline)) unsigned long fill(unsigned long x) {
		for (int i = 0; i < 50; i++) m[churn(x + i) & 1023] += i;
		return m.size();
	}
};

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 20000;
	std::function<unsigned long(unsigned long)> fn = [](unsigned long v) { return churn(v); };
	Box b;
	unsigned long s = 0;
	for (long i = 0; i < n; i++) {
		s += apply([&](unsigned long v) { return fn(v) + b.fill(v); }, (unsigned long)i);
		s += apply(std::function<unsigned long(unsigned long)>(fn), (unsigned long)i);
	}
	std::printf("%lu\n", s);
	return 0;
}
