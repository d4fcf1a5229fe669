package fold

// Options select how frames and roots are named, as the reference's flags.
type Options struct {
	PID    bool // root frame comm-PID
	TID    bool // root frame comm-PID/TID (implies PID)
	Kernel bool // suffix kernel frames with _[k]
	JIT    bool // suffix JIT frames (/tmp/perf-PID.map, jitted-*.so) with _[j]
	Addrs  bool // [module <addr>] instead of [module] for unsymbolised frames

	// EventFilter folds only samples of this event ("cpu-clock",
	// "cycles:u"); empty means the first event type seen.
	EventFilter string

	// Threads is the number of parser goroutines; <= 0 means 1.
	Threads int
}
