package audit

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Workload is what the host is for. It decides which rules apply and what
// each knob is expected to be: the same knob is right for one workload and
// wrong for another (THP `never` for redis and databases, `always` for the
// JVM proxy of seed 000).
//
// Targets is the single source of truth for expected values. Rules read it
// through Expect; tune applies what failing rules derive from it; a user
// profile file overrides it. Keys are sysctl names or the pseudo-knobs below:
//
//	thp.enabled, thp.defrag   THP policy words
//	cpu.governor              cpufreq governor
//	cpu.boost                 1 or 0
//	cpu.max_cstate_latency_us deepest acceptable C-state exit latency
//	cpu.epp                   energy_performance_preference (HWP/CPPC hint)
//	cpu.smt                   on or off (SMT siblings share a core)
//	kernel.preempt            preemption model: none, voluntary, full, lazy, rt
//	ksm.run                   /sys/kernel/mm/ksm/run: 0 off, 1 merging, 2 unmerge
//	block.scheduler.ssd       scheduler for non-rotational disks
//	block.scheduler.hdd       scheduler for rotational disks
//	block.read_ahead_kib      read-ahead
//	limits.nofile             minimum open-files soft limit
//	steal.max_pct             steal time above which the host is oversubscribed
//	nf_conntrack.max_use_pct  highest acceptable conntrack table use, percent
//	cgroup.cpu_throttled_pct  share of CFS periods a CPU-quota cgroup may be throttled in
//
// A target is an expectation: "a|b" (any of; the first is what tune sets),
// ">=N", "<=N", or an exact value.
type Workload struct {
	Name        string            `yaml:"name" json:"name"`
	Description string            `yaml:"description" json:"description"`
	Extends     string            `yaml:"extends,omitempty" json:"extends,omitempty"`
	Trusted     bool              `yaml:"trusted" json:"trusted"` // single tenant: side-channel mitigations may be traded for speed
	Targets     map[string]string `yaml:"set" json:"targets"`
	Skip        map[string]bool   `yaml:"-" json:"skip,omitempty"`
	SkipList    []string          `yaml:"skip,omitempty" json:"-"`
	Alias       string            `yaml:"-" json:"alias,omitempty"` // the application name it was looked up by ("redis" for kv)
	base        string            // the built-in workload this one extends (itself for built-ins)
}

// Label is the workload's name as reports show it: "redis → kv" when it was
// chosen by an application alias, else its name.
func (w *Workload) Label() string { return workloadLabel(w.Name, w.Alias) }

func workloadLabel(name, alias string) string {
	if alias == "" {
		return name
	}
	return alias + " → " + name
}

// Base returns the built-in workload a user profile descends from.
func (w *Workload) Base() string { return w.base }

// extends reports whether w descends from one of the given workloads.
func (w *Workload) extends(names []string) bool {
	for _, n := range names {
		if n == w.base {
			return true
		}
	}
	return false
}

// Expect returns the workload's expectation for a knob.
func (w *Workload) Expect(knob string) (Expectation, bool) {
	v, ok := w.Targets[knob]
	if !ok {
		return Expectation{}, false
	}
	return ParseExpectation(v), true
}

// Expectation is a parsed target.
type Expectation struct {
	raw   string
	any   []string // exact alternatives
	op    string   // ">=", "<=" or ""
	bound float64
}

// ParseExpectation parses "a|b", ">=N", "<=N" or an exact value.
func ParseExpectation(s string) Expectation {
	e := Expectation{raw: s}
	for _, op := range []string{">=", "<="} {
		if strings.HasPrefix(s, op) {
			if v, err := strconv.ParseFloat(strings.TrimSpace(s[len(op):]), 64); err == nil {
				e.op, e.bound = op, v
				return e
			}
		}
	}
	for _, a := range strings.Split(s, "|") {
		e.any = append(e.any, normalizeSpace(a))
	}
	return e
}

// Matches reports whether an observed value meets the expectation. Values
// compare with white space folded ("4096\t87380" equals "4096 87380").
func (e Expectation) Matches(observed string) bool {
	if e.op != "" {
		v, err := strconv.ParseFloat(strings.TrimSpace(observed), 64)
		if err != nil {
			return false
		}
		if e.op == ">=" {
			return v >= e.bound
		}
		return v <= e.bound
	}
	o := normalizeSpace(observed)
	for _, a := range e.any {
		if a == o {
			return true
		}
	}
	return false
}

// Value is what tune writes to meet the expectation.
func (e Expectation) Value() string {
	if e.op != "" {
		if e.bound == math.Trunc(e.bound) {
			return strconv.FormatInt(int64(e.bound), 10)
		}
		return strconv.FormatFloat(e.bound, 'f', -1, 64)
	}
	return e.any[0]
}

// String is the expectation as people read it: "never or madvise", ">= 4096".
func (e Expectation) String() string {
	if e.op != "" {
		return e.op + " " + e.Value()
	}
	return strings.Join(e.any, " or ")
}

func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// Shared targets every built-in starts from.
func baseTargets() map[string]string {
	return map[string]string{
		"thp.enabled":                  "madvise|always",
		"thp.defrag":                   "madvise|defer+madvise|defer|never",
		"cpu.governor":                 "performance|schedutil|ondemand",
		"cpu.boost":                    "1",
		"cpu.max_cstate_latency_us":    "<=1000",
		"cpu.epp":                      "performance|balance_performance|default",
		"cpu.smt":                      "on|off",
		"kernel.preempt":               "none|voluntary|full|lazy|rt",
		"kernel.nmi_watchdog":          "0|1",
		"ksm.run":                      "0|2",
		"block.scheduler.ssd":          "none|mq-deadline|kyber",
		"block.scheduler.hdd":          "mq-deadline|bfq",
		"block.read_ahead_kib":         "<=4096",
		"limits.nofile":                ">=65535",
		"steal.max_pct":                "<=5",
		"vm.swappiness":                "<=60",
		"vm.zone_reclaim_mode":         "0",
		"vm.dirty_ratio":               "<=40",
		"vm.dirty_background_ratio":    "<=10",
		"kernel.numa_balancing":        "1|0",
		"kernel.pid_max":               ">=32768",
		"kernel.perf_event_paranoid":   "<=2",
		"kernel.kptr_restrict":         "0|1",
		"fs.file-max":                  ">=1048576",
		"net.core.somaxconn":           ">=4096",
		"net.ipv4.tcp_max_syn_backlog": ">=4096",
		"net.ipv4.tcp_window_scaling":  "1",
		"net.ipv4.tcp_syncookies":      "1",
		"net.ipv4.tcp_rmem":            "4096 131072 6291456",
		"net.ipv4.tcp_wmem":            "4096 16384 4194304",
		"net.ipv4.tcp_fin_timeout":     "<=60",
		"net.ipv4.tcp_tw_reuse":        "1|2",
		"net.ipv4.tcp_fastopen":        "1|3",
		"net.core.netdev_max_backlog":  ">=1000",
		"net.ipv4.ip_local_port_range": "32768 60999|1024 65535",
		"net.core.busy_poll":           ">=0",
		"net.core.busy_read":           ">=0",
		"vm.overcommit_memory":         "0|1",
		"nf_conntrack.max_use_pct":     "<=80",
		"cgroup.cpu_throttled_pct":     "<=5",
	}
}

type builtin struct {
	name, desc string
	set        map[string]string
}

// The built-in workloads. Each overrides baseTargets; the comment on each
// override is the reason, repeated in the matching rule's Why.
var builtins = []builtin{
	{"general", "a general-purpose server: defaults that are safe everywhere", nil},
	{"latency", "latency-sensitive services (trading, RPC front ends): trade power and throughput for tail latency", map[string]string{
		"thp.enabled":               "madvise|never", // compaction stalls and khugepaged add jitter
		"thp.defrag":                "madvise|defer+madvise|never",
		"cpu.governor":              "performance",
		"cpu.max_cstate_latency_us": "<=20",
		"cpu.epp":                   "performance",
		"cpu.smt":                   "off",          // a busy sibling steals the core's execution units
		"kernel.preempt":            "full|lazy|rt", // bound how long a kernel path can delay a wakeup
		"kernel.nmi_watchdog":       "0",
		"kernel.numa_balancing":     "0", // NUMA hinting faults add latency spikes
		"vm.swappiness":             "<=10",
		"net.core.busy_poll":        ">=50",
		"net.core.busy_read":        ">=50",
		"steal.max_pct":             "<=1",
		"cgroup.cpu_throttled_pct":  "<=1", // a throttled period stalls every request in it
	}},
	{"throughput", "batch and throughput-bound jobs: maximise work per second", map[string]string{
		"thp.enabled":                 "always|madvise",
		"cpu.governor":                "performance",
		"cpu.epp":                     "performance|balance_performance",
		"kernel.preempt":              "none|voluntary|lazy", // fewer preemptions, less context-switch overhead
		"net.core.netdev_max_backlog": ">=16384",
		"block.read_ahead_kib":        ">=128",
	}},
	{"database", "relational databases (MySQL/MariaDB, PostgreSQL): many small allocations, fsync-heavy", map[string]string{
		"thp.enabled":               "never|madvise", // MySQL/PostgreSQL/MongoDB docs: THP causes latency and memory bloat
		"thp.defrag":                "never|madvise|defer+madvise",
		"cpu.governor":              "performance",
		"cpu.epp":                   "performance",
		"vm.swappiness":             "<=10",
		"vm.dirty_ratio":            "<=20",
		"vm.dirty_background_ratio": "<=5",
		"kernel.numa_balancing":     "0",
		"block.scheduler.ssd":       "none|mq-deadline",
		"net.core.somaxconn":        ">=4096",
	}},
	{"kv", "in-memory key-value stores (redis, memcached): fork/COW and small allocations", map[string]string{
		"thp.enabled":                  "never|madvise", // redis: THP makes fork COW copy 2 MiB pages, latency spikes
		"thp.defrag":                   "never|madvise|defer+madvise",
		"cpu.governor":                 "performance",
		"cpu.epp":                      "performance",
		"vm.overcommit_memory":         "1", // redis BGSAVE fork fails under overcommit 0
		"vm.swappiness":                "<=10",
		"net.core.somaxconn":           ">=65535",
		"net.ipv4.tcp_max_syn_backlog": ">=65536",
	}},
	{"web", "web servers and proxies (nginx, haproxy, envoy): many short connections", map[string]string{
		"cpu.governor":                 "performance",
		"cpu.epp":                      "performance",
		"net.core.somaxconn":           ">=65535",             // seed 002
		"net.ipv4.tcp_max_syn_backlog": ">=65536",             // seed 002
		"net.ipv4.tcp_rmem":            "4096 87380 16777216", // seed 002
		"net.ipv4.tcp_wmem":            "4096 65536 16777216", // seed 002
		"net.ipv4.tcp_fin_timeout":     "<=15",                // seed 002
		"net.ipv4.tcp_tw_reuse":        "1",                   // seed 002
		"net.ipv4.tcp_fastopen":        "3",                   // seed 002
		"net.core.netdev_max_backlog":  ">=16384",
		"net.ipv4.ip_local_port_range": "1024 65535",
		"limits.nofile":                ">=1048576",
	}},
	{"jvm", "JVM services (Java proxies and app servers): large heaps, TLB-bound", map[string]string{
		"thp.enabled":  "always", // seed 000: madvise → always took a Java proxy from 16000 to 28300 TPS
		"thp.defrag":   "madvise|defer+madvise|defer",
		"cpu.governor": "performance",
		"cpu.epp":      "performance",
	}},
	{"container-host", "a node running many containers (Kubernetes worker)", map[string]string{
		"cpu.governor":                  "performance", // seed 004: a container host on powersave served half the TPS
		"kernel.pid_max":                ">=4194304",
		"fs.file-max":                   ">=2097152",
		"net.core.somaxconn":            ">=4096",
		"vm.overcommit_memory":          "1|0",
		"fs.inotify.max_user_watches":   ">=524288",
		"fs.inotify.max_user_instances": ">=8192",
		"nf_conntrack.max_use_pct":      "<=60",
	}},
}

// WorkloadAlias is an application name accepted for --workload, and the
// built-in workload class it stands for.
type WorkloadAlias struct {
	Name     string `json:"name"`
	Workload string `json:"workload"`
	Why      string `json:"why"` // why that class fits, when it is not obvious
}

// workloadAliases are the applications of the field reports (seeds 000-004:
// redis, nginx, mysql, postgresql, etcd, java services) and their close
// relatives. etcd is a key-value store, but what bounds it is not fork/COW
// or connection churn: every Raft commit waits for a write-ahead-log fsync,
// and etcd's tuning guide is about disk latency and priority. The database
// targets (dirty-page limits, no THP, performance governor, no NUMA
// balancing) fit that; kv's vm.overcommit_memory=1 exists for redis's
// fork and would be wrong advice for etcd.
var workloadAliases = []WorkloadAlias{
	{Name: "redis", Workload: "kv"},
	{Name: "valkey", Workload: "kv"},
	{Name: "memcached", Workload: "kv"},
	{Name: "nginx", Workload: "web"},
	{Name: "haproxy", Workload: "web"},
	{Name: "envoy", Workload: "web"},
	{Name: "mysql", Workload: "database"},
	{Name: "mariadb", Workload: "database"},
	{Name: "postgresql", Workload: "database"},
	{Name: "postgres", Workload: "database"},
	{Name: "etcd", Workload: "database", Why: "every Raft commit waits for a WAL fsync: disk latency, not fork/COW, bounds it"},
	{Name: "java", Workload: "jvm"},
}

// WorkloadAliases lists the application aliases in catalogue order.
func WorkloadAliases() []WorkloadAlias { return append([]WorkloadAlias(nil), workloadAliases...) }

// WorkloadFlagHelp is the usage text of a --workload flag: the built-ins,
// the application aliases grouped by the class they map to, and profiles.
func WorkloadFlagHelp() string {
	var groups []string
	byClass := map[string][]string{}
	for _, a := range workloadAliases {
		if len(byClass[a.Workload]) == 0 {
			groups = append(groups, a.Workload)
		}
		byClass[a.Workload] = append(byClass[a.Workload], a.Name)
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = strings.Join(byClass[g], ", ") + " → " + g
	}
	return "workload: " + strings.Join(Workloads(), "|") + "; or an application, which picks its class (" +
		strings.Join(parts, "; ") + "); or a YAML profile file"
}

// WorkloadNames lists the built-in names and then the aliases, for shell
// completion.
func WorkloadNames() []string {
	out := Workloads()
	for _, a := range workloadAliases {
		out = append(out, a.Name)
	}
	return out
}

// aliasFor returns the built-in class an application name stands for.
func aliasFor(name string) (string, bool) {
	n := strings.ToLower(name)
	for _, a := range workloadAliases {
		if a.Name == n {
			return a.Workload, true
		}
	}
	return "", false
}

// Workloads lists the built-in workload names in catalogue order.
func Workloads() []string {
	out := make([]string, len(builtins))
	for i, b := range builtins {
		out[i] = b.name
	}
	return out
}

// WorkloadInfo returns a built-in workload's description.
func WorkloadInfo(name string) string {
	for _, b := range builtins {
		if b.name == name {
			return b.desc
		}
	}
	return ""
}

// ErrUnknownWorkload is returned for a name that is neither built in nor a file.
type ErrUnknownWorkload struct{ Name string }

func (e ErrUnknownWorkload) Error() string {
	apps := make([]string, len(workloadAliases))
	for i, a := range workloadAliases {
		apps[i] = a.Name
	}
	return fmt.Sprintf("unknown workload %q (built-in: %s; applications: %s; or a profile file)",
		e.Name, strings.Join(Workloads(), ", "), strings.Join(apps, ", "))
}

// LookupWorkload returns a fresh copy of a built-in workload, by its name or
// an application alias ("redis" gives kv, with Alias "redis").
func LookupWorkload(name string) (*Workload, error) {
	if class, ok := aliasFor(name); ok {
		w, err := LookupWorkload(class)
		if err != nil {
			return nil, err
		}
		w.Alias = strings.ToLower(name)
		return w, nil
	}
	for _, b := range builtins {
		if b.name == name {
			t := baseTargets()
			for k, v := range b.set {
				t[k] = v
			}
			return &Workload{Name: b.name, Description: b.desc, Targets: t, Skip: map[string]bool{}, base: b.name}, nil
		}
	}
	return nil, ErrUnknownWorkload{name}
}

// ResolveWorkload accepts a built-in name or a path to a YAML profile.
func ResolveWorkload(nameOrFile string) (*Workload, error) {
	if w, err := LookupWorkload(nameOrFile); err == nil {
		return w, nil
	}
	if strings.ContainsAny(nameOrFile, "/.") {
		if _, err := os.Stat(nameOrFile); err == nil {
			return LoadProfile(nameOrFile)
		}
	}
	return nil, ErrUnknownWorkload{nameOrFile}
}

// LoadProfile reads a user profile: a YAML file that extends a built-in
// workload, overrides targets under `set:` and skips rules under `skip:`.
//
//	name: my-proxy
//	extends: web
//	trusted: true
//	set:
//	  net.core.somaxconn: ">=32768"
//	skip: [NET-SYNCOOKIES]
func LoadProfile(path string) (*Workload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseProfile(path, data)
}

// ParseProfile parses profile YAML; name is used in error messages.
func ParseProfile(name string, data []byte) (*Workload, error) {
	var p Workload
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	if p.Extends == "" {
		p.Extends = "general"
	}
	base, err := LookupWorkload(p.Extends)
	if err != nil {
		return nil, fmt.Errorf("profile %s: extends: %w", name, err)
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(strings.TrimSuffix(baseName(name), ".yaml"), ".yml")
	}
	known := baseTargets()
	var unknown []string
	for k, v := range p.Targets {
		if _, ok := known[k]; !ok && !strings.Contains(k, ".") {
			unknown = append(unknown, k)
			continue
		}
		base.Targets[k] = fmt.Sprint(v)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("profile %s: unknown knob(s) %s", name, strings.Join(unknown, ", "))
	}
	for _, id := range p.SkipList {
		if _, ok := Lookup(id); !ok {
			return nil, fmt.Errorf("profile %s: skip: no rule %q", name, id)
		}
		base.Skip[id] = true
	}
	base.Name = p.Name
	base.Alias = ""
	base.Description = p.Description
	base.Extends = p.Extends
	base.Trusted = p.Trusted
	return base, nil
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
