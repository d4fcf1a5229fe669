// Package fold turns `perf script` text into folded stacks: one line per
// unique stack, `comm;root;…;leaf COUNT`, sorted in byte order, COUNT being
// the sum of the samples' periods (1 when perf printed none).
//
// The output is byte-for-byte what the established folder produces
// (inferno-collapse-perf, itself a port of FlameGraph's
// stackcollapse-perf.pl), because users diff and merge folded files made
// by either tool and flame graphs must not change with the folder used.
// That includes its quirks: symbol offsets `+0x…` stripped, argument lists
// removed except in Go method names and C++ `(anonymous namespace)`,
// `[unknown]` replaced by `[module]`, Java `L…;` names tidied, Rust hashes
// demangled, `_[k]`/`_[j]`/`_[i]` annotations, only the first event type
// folded unless one is chosen, and the last stack kept without a trailing
// blank line. Where inferno departs from the Perl original (quotes, Rust
// demangling, jitdump frames, C++ argument lists in templates, single-line
// stacks, the last stack), fold follows inferno; docs/flame.md lists them.
// Lines that are neither event nor frame lines are counted (Stats) and
// folded around, as inferno warns about and folds around them.
//
// It is written here rather than taken from a library because no Go
// package parses perf script, and because it must be fast: perf script
// output runs to gigabytes. Parsing is byte-level with no regular
// expressions and no allocation per line. Frame lines repeat (tens of
// thousands of distinct lines make up millions), so each distinct line is
// cleaned once and later copies are recognised: in the input, before
// their end is looked for, as byte-for-byte copies of the last line seen
// with one of the two entries that followed the previous line last time;
// else by their key (the line after its address) compared with those
// two; else by a hash lookup. A sample is interned by its frames' ids,
// and the folded text of each unique stack is built once, at the end;
// memory grows with unique lines and stacks, not with the input. With
// more than one thread the input is cut at blank lines (where the
// parser's state is known to be reset) into blocks folded by worker
// goroutines; their stacks are merged by ids into the worker with the
// most, and their texts built and sorted by two goroutines.
package fold
