package knowledge

// The host-drift reference (package hostnoise) is meant to follow the host
// only, but some settings move its workloads too. When such a setting
// differs between two sides, the reference's movement is that setting's
// doing and is no evidence of host drift (compare's explain applies it).

// Reference workloads of the host-drift reference.
const (
	RefCPU     = "cpu"     // dependent integer chain: the core clock
	RefMemory  = "memory"  // 64 MiB sequential read: bus and last-level cache
	RefSyscall = "syscall" // getppid: kernel entry and exit
)

// Confounder is a setting (a knowledge entry) that moves a reference
// workload.
type Confounder struct {
	Knob string // knowledge entry id
	// Why, worded to follow "the REF reference moved too: ".
	Why string
	// UnlessSmallPages: the setting moves the reference only when the
	// reference's buffer could be backed by huge pages (runs made before
	// the buffer was mapped MADV_NOHUGEPAGE).
	UnlessSmallPages bool
}

// ReferenceConfounders lists, for each reference workload, the settings
// that can still move it.
var ReferenceConfounders = map[string][]Confounder{
	RefCPU: {
		{Knob: "cpu-governor", Why: "the governor sets the core clock the chain runs at"},
		{Knob: "cpu-boost", Why: "turbo boost and frequency limits set the core clock the chain runs at"},
		{Knob: "smt", Why: "an SMT sibling shares the core the chain runs on"},
	},
	RefSyscall: {
		{Knob: "mitigations", Why: "mitigations change the cost of every kernel entry and exit"},
		{Knob: "cpu-governor", Why: "the governor sets the clock kernel entry and exit run at"},
		{Knob: "cpu-boost", Why: "turbo boost and frequency limits set the clock kernel entry and exit run at"},
		{Knob: "kernel", Why: "another kernel has another system-call path"},
	},
	RefMemory: {
		{Knob: "thp", Why: "THP decides the page size of the reference's buffer", UnlessSmallPages: true},
		{Knob: "numa", Why: "the NUMA layout decides which memory the buffer lands on"},
	},
}

// MovesReference reports whether the knowledge entry knob can move the
// reference workload ref; smallPages says whether every reading of it
// used a buffer fixed to base pages.
func MovesReference(knob, ref string, smallPages bool) (Confounder, bool) {
	for _, c := range ReferenceConfounders[ref] {
		if c.Knob == knob && !(c.UnlessSmallPages && smallPages) {
			return c, true
		}
	}
	return Confounder{}, false
}
