// Package knob is the catalogue of the settings perflab reads and writes:
// for each one its snapshot fact path (as internal/snapshot/factpath names
// it), the host file behind it (templated for per-device, per-queue, per-CPU,
// per-IRQ and per-cgroup settings), how that file parses and how it is
// written, its scope (one network namespace, the whole host, one cgroup, or
// only at boot) and a value ladder a tuning search can climb.
//
// It is the one place that knows these things: the snapshot collectors read
// the files it names and parse them with its parsers, the audit builds its
// Changes from it, tune reads, writes and journals through it, bisect turns
// a difference into a candidate with it, and the exporter takes its enum
// values from it. The kernel's "a [b] c" choice lists are parsed here only
// (ParseChoice).
//
// Every read and write goes through hostfs, so the catalogue works the same
// on fixture trees as on the live host. No library describes these files
// with their scope and write semantics, hence this package.
//
// Scopes were checked on Linux 6.18: the net sysctls listed in hostWideNet
// exist only in the initial network namespace, and net.core.{r,w}mem_* and
// net.netfilter.nf_conntrack_max exist in every namespace but are read-only
// outside the initial one (Knob.NetNSReadOnly).
package knob

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/hostfs"
)

// Format is how a knob's file parses.
type Format string

const (
	Int     Format = "int"     // one integer: "4096"
	Ints    Format = "ints"    // integers separated by white space: tcp_rmem "4096 131072 6291456"
	Text    Format = "text"    // a word or words, white space folded: "performance", "write back"
	Choice  Format = "choice"  // the kernel's choice list, selected word bracketed: "always [madvise] never"
	CPUMask Format = "cpumask" // hex CPU mask with optional commas: "00000000,00000003"
	CPUList Format = "cpulist" // CPU list: "0-3,5"
	Bool    Format = "bool"    // 0 or 1 ("true"/"false" accepted when written)
	NotBool Format = "notbool" // 0 or 1 meaning the opposite of the fact (intel_pstate/no_turbo for cpu.boost)
	Max     Format = "max"     // cgroup v2 limit: "max" or an integer, optionally followed by more fields (cpu.max "max 100000"); the fact shows "max" as -1
	Limit   Format = "limit"   // cgroup v1 limit: an integer where -1 or ≥ 2^62 means unlimited (read as -1)
)

// Method is how a knob is written.
type Method string

const (
	Sysctl Method = "sysctl" // a /proc/sys file, named by its sysctl name
	File   Method = "file"   // a /sys or /proc file written in place
	Boot   Method = "boot"   // a kernel command-line parameter: an instruction, never written
	None   Method = "none"   // read-only: perflab reports it but does not write it
)

// Scope is what a write reaches.
type Scope string

const (
	NetNS  Scope = "netns"  // one network namespace: net sysctls, a NIC's sysfs files
	Host   Scope = "host"   // the whole host, whatever namespace writes it
	Cgroup Scope = "cgroup" // one cgroup
	Reboot Scope = "boot"   // takes effect only after a reboot
)

// Source is one file that may back a knob; a knob with several (cgroup v2
// then v1; cpufreq/boost then intel_pstate/no_turbo) uses the first that
// exists on the host.
type Source struct {
	File   string // host path template: "/sys/block/{dev}/queue/read_ahead_kb"
	Format Format
}

// Knob is one setting of the catalogue, or (after Lookup of a concrete
// path or With) one instance of it with its template keys bound.
type Knob struct {
	Path    string   // fact path pattern: "block[*].read_ahead_kib", "sysctl.net.core.somaxconn"
	Sources []Source // files that may back it, in order of preference
	Method  Method
	Scope   Scope
	// NetNSReadOnly: the file exists in every network namespace but only
	// the initial one may write it (net.core.rmem_max on Linux ≥ 6.x).
	NetNSReadOnly bool
	Values        []string // the values a choice knob knows (exporter enums); may be incomplete
	// Ladder is the values a tuning search tries, in order (small →
	// large, safe → aggressive), as the fact shows them: FromFact gives
	// the file value to write (they differ only for cpu.boost under
	// intel_pstate and -1 for an unlimited cgroup v2 limit).
	Ladder []string
	Unit   string
	Doc    string
	// Group names knobs that act together, so a tuning search also tries
	// them together: a larger tcp_rmem alone against a 4 KiB tcp_wmem
	// made a loopback stream 20× slower (delayed ACKs stall the small send
	// buffer), a larger tcp_wmem alone 22% slower, both together 14×
	// faster (Linux 6.18, 2-core VM).
	Group string
	// Risk says why an automatic write may harm the host beyond the
	// measurement ("" when a write is only a performance change): a
	// search or bisect leaves such a knob to a person.
	Risk string

	keys []string // bound template keys, in template order
	fact string   // the concrete fact path it was looked up with
}

// Keys returns the names of the knob's template keys in order: "dev" for
// "/sys/block/{dev}/queue/read_ahead_kb".
func (k Knob) Keys() []string {
	if len(k.Sources) == 0 {
		return nil
	}
	return templateKeys(k.Sources[0].File)
}

// Bound reports whether every template key has a value.
func (k Knob) Bound() bool { return len(k.keys) == len(k.Keys()) }

// With binds the template keys in order: knob.MustLookup("block[*].read_ahead_kib").With("sda").
func (k Knob) With(keys ...string) Knob {
	k.keys = append([]string(nil), keys...)
	return k
}

// Fact is the concrete fact path of a bound knob (the pattern when unbound
// or when the keys are not the fact's).
func (k Knob) Fact() string {
	if k.fact != "" {
		return k.fact
	}
	return k.Path
}

// Name is what a user recognises: the sysctl name of a sysctl, the file
// of a bound file knob, the fact path otherwise.
func (k Knob) Name() string {
	if k.Method == Sysctl {
		return strings.TrimPrefix(k.Path, "sysctl.")
	}
	if k.Bound() && len(k.Sources) > 0 {
		return k.expand(k.Sources[0].File)
	}
	return k.Fact()
}

// Settable reports whether perflab writes the knob at run time.
func (k Knob) Settable() bool { return k.Method == Sysctl || k.Method == File }

// Files returns the candidate host paths of a bound knob.
func (k Knob) Files() []string {
	out := make([]string, 0, len(k.Sources))
	for _, s := range k.Sources {
		out = append(out, k.expand(s.File))
	}
	return out
}

// ErrUnbound is returned when a templated knob is read or written without
// its keys.
var ErrUnbound = errors.New("knob keys not bound")

// Resolve returns the file backing a bound knob on fs and its format: the
// first source that exists, or the first source when none does (so the
// error names the preferred file).
func (k Knob) Resolve(fs hostfs.FS) (string, Format, error) {
	if len(k.Sources) == 0 {
		return "", "", fmt.Errorf("%s has no file: it is set at boot", k.Path)
	}
	if !k.Bound() {
		return "", "", fmt.Errorf("%s: %w (%s)", k.Path, ErrUnbound, strings.Join(k.Keys(), ", "))
	}
	for _, s := range k.Sources {
		if p := k.expand(s.File); fs.Exists(p) {
			return p, s.Format, nil
		}
	}
	return k.expand(k.Sources[0].File), k.Sources[0].Format, nil
}

// Read returns the knob's current value on fs, normalised (Parse).
func (k Knob) Read(fs hostfs.FS) (string, error) {
	p, f, err := k.Resolve(fs)
	if err != nil {
		return "", err
	}
	b, err := fs.ReadFile(p)
	if err != nil {
		return "", err
	}
	v, err := Parse(f, string(b))
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return v, nil
}

// Write sets the knob on fs to v (a value as Read returns it or as the
// fact shows it), in place.
func (k Knob) Write(fs hostfs.FS, v string) error {
	p, data, err := k.Content(fs, v)
	if err != nil {
		return err
	}
	return fs.WriteFile(p, data)
}

// Content is the file and the bytes Write would write.
func (k Knob) Content(fs hostfs.FS, v string) (string, []byte, error) {
	if !k.Settable() {
		return "", nil, fmt.Errorf("%s is not written at run time (%s)", k.Path, k.Method)
	}
	p, f, err := k.Resolve(fs)
	if err != nil {
		return "", nil, err
	}
	s, err := Encode(f, v)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", k.Name(), err)
	}
	return p, []byte(s + "\n"), nil
}

// Normalize is v as Read would return it after writing it, for comparing a
// wanted value with a read one; v unchanged when it does not parse.
func (k Knob) Normalize(v string) string {
	f := Text
	if len(k.Sources) > 0 {
		f = k.Sources[0].Format
	}
	e, err := Encode(f, v)
	if err != nil {
		return strings.Join(strings.Fields(v), " ")
	}
	n, err := Parse(f, e)
	if err != nil {
		return e
	}
	return n
}

func (k Knob) expand(tmpl string) string {
	names := templateKeys(tmpl)
	for i, n := range names {
		if i < len(k.keys) {
			tmpl = strings.Replace(tmpl, "{"+n+"}", k.keys[i], 1)
		}
	}
	return tmpl
}

// keyRE matches a template's {key}; compiled on first use, as a
// package-level pattern costs every perflab command at start-up.
var keyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([a-z]+)\}`) })

// templateKeys lists a template's {key} names as keyRE finds them, by a
// scan: it runs for every file a collector reads through a knob.
func templateKeys(tmpl string) []string {
	var out []string
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '{' {
			continue
		}
		j := i + 1
		for j < len(tmpl) && tmpl[j] >= 'a' && tmpl[j] <= 'z' {
			j++
		}
		if j > i+1 && j < len(tmpl) && tmpl[j] == '}' {
			out = append(out, tmpl[i+1:j])
			i = j
		}
	}
	return out
}

// ParseChoice parses the kernel's choice lists, where the selected word is
// bracketed: "always [madvise] never" gives "madvise" and all three words.
// ok is false when no word is bracketed.
func ParseChoice(s string) (selected string, words []string, ok bool) {
	for _, w := range strings.Fields(s) {
		if len(w) > 2 && w[0] == '[' && w[len(w)-1] == ']' {
			w = w[1 : len(w)-1]
			if !ok {
				selected, ok = w, true
			}
		}
		words = append(words, w)
	}
	return selected, words, ok
}

// unlimited is where cgroup v1 limits start meaning "no limit" (the kernel
// prints PAGE_COUNTER_MAX rounded to pages, just below 2^63).
const unlimited = int64(1) << 62

// Parse turns a file's content into the knob's normalised file value
// (what writing back restores, and what a Change's Value and Current
// hold): the selected word of a choice list, white space folded, a CPU
// mask without leading zeros and commas, a CPU list in canonical form, the
// first field of cpu.max, -1 for a cgroup v1 "no limit".
func Parse(f Format, raw string) (string, error) {
	s := strings.Join(strings.Fields(raw), " ")
	switch f {
	case Bool, NotBool:
		if s != "0" && s != "1" {
			return "", fmt.Errorf("not 0 or 1: %q", short(s))
		}
		return s, nil
	case Int:
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return "", fmt.Errorf("not an integer: %q", short(s))
		}
		return s, nil
	case Ints:
		for _, w := range strings.Fields(s) {
			if _, err := strconv.ParseInt(w, 10, 64); err != nil {
				return "", fmt.Errorf("not a list of integers: %q", short(s))
			}
		}
		return s, nil
	case Choice:
		sel, words, ok := ParseChoice(s)
		if !ok {
			// One word alone is that word selected: what a file tune wrote
			// holds in a copied tree (the kernel would bracket it).
			if len(words) == 1 {
				return words[0], nil
			}
			return "", fmt.Errorf("no [selected] value in %q", short(s))
		}
		if strings.ContainsAny(sel, "[]") {
			return "", fmt.Errorf("malformed choice list %q", short(s))
		}
		return sel, nil
	case CPUMask:
		cpus, err := cpuset.ParseMask(s)
		if err != nil {
			return "", fmt.Errorf("not a CPU mask: %q", short(s))
		}
		return canonicalMask(cpus), nil
	case CPUList:
		cpus, err := cpuset.ParseList(s)
		if err != nil {
			return "", fmt.Errorf("not a CPU list: %q", short(s))
		}
		return cpuset.FormatList(cpus), nil
	case Max:
		w, _, _ := strings.Cut(s, " ")
		if w == "max" {
			return w, nil
		}
		if n, err := strconv.ParseInt(w, 10, 64); err != nil || n < 0 {
			return "", fmt.Errorf("not \"max\" or a count: %q", short(s))
		}
		return w, nil
	case Limit:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return "", fmt.Errorf("not an integer: %q", short(s))
		}
		if n < 0 || n >= unlimited {
			return "-1", nil
		}
		return s, nil
	case Text, "":
		return s, nil
	}
	return "", fmt.Errorf("unknown format %q", f)
}

// Encode checks a file value and returns what is written to the file
// (without the newline). It accepts Parse's output, "true"/"false" for a
// bool and "max" for a cgroup v1 limit.
func Encode(f Format, v string) (string, error) {
	s := strings.Join(strings.Fields(v), " ")
	switch f {
	case Bool, NotBool:
		b := s
		switch s {
		case "true":
			b = "1"
		case "false":
			b = "0"
		}
		if b != "0" && b != "1" {
			return "", fmt.Errorf("%q is not 0, 1, true or false", short(s))
		}
		return b, nil
	case Limit:
		if s == "max" {
			return "-1", nil
		}
	case Choice:
		if sel, _, ok := ParseChoice(s); ok {
			return sel, nil
		}
	case CPUMask:
		cpus, err := cpuset.ParseMask(s)
		if err != nil {
			return "", fmt.Errorf("%q is not a CPU mask", short(s))
		}
		return canonicalMask(cpus), nil
	case CPUList:
		cpus, err := cpuset.ParseList(s)
		if err != nil {
			return "", fmt.Errorf("%q is not a CPU list", short(s))
		}
		return cpuset.FormatList(cpus), nil
	}
	if s == "" {
		return "", errors.New("empty value")
	}
	if _, err := Parse(f, s); err != nil && f != Choice {
		return "", err
	}
	return s, nil
}

// canonicalMask prints a CPU set as a hex mask without leading zeros or
// commas ("0" for none), which the kernel accepts for any CPU count.
func canonicalMask(cpus []int) string {
	if len(cpus) == 0 {
		return "0"
	}
	max := 0
	for _, c := range cpus {
		if c > max {
			max = c
		}
	}
	nibbles := make([]byte, max/4+1)
	for _, c := range cpus {
		nibbles[c/4] |= 1 << (c % 4)
	}
	var b strings.Builder
	for i := len(nibbles) - 1; i >= 0; i-- {
		b.WriteByte("0123456789abcdef"[nibbles[i]])
	}
	return b.String()
}

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// Lookup finds the knob of a fact path: a pattern ("block[*].read_ahead_kib")
// or a concrete path ("block[sda].read_ahead_kib", whose array keys bind
// the template keys in order). Any sysctl has a knob: one the catalogue
// lists, or a text knob whose scope follows from its name.
func Lookup(path string) (Knob, bool) {
	if name, ok := strings.CutPrefix(path, "sysctl."); ok && name != "" {
		return sysctlKnob(name), true
	}
	pat, keys := bracketKeys(path)
	k, ok := byPath()[pat]
	if !ok {
		// a map-valued fact: cpu.governors.performance → cpu.governors,
		// kernel.params.intel_idle.max_cstate → kernel.params
		for _, e := range catalogue() {
			if e.noBind && strings.HasPrefix(pat, e.Path+".") {
				return e.Knob, true
			}
		}
		return Knob{}, false
	}
	kn := k.Knob
	if len(keys) > 0 && !k.noBind {
		kn = kn.With(keys...)
		kn.fact = path
	}
	return kn, true
}

// MustLookup is Lookup for a path the catalogue is known to hold (a
// literal in the code; the tests check every call).
func MustLookup(path string) Knob {
	k, ok := Lookup(path)
	if !ok {
		panic("knob: no knob for " + path)
	}
	return k
}

// bracketKeys returns a fact path with every "[…]" (as `\[[^\]]*\]`
// finds them) written "[*]", and the keys inside them other than "*".
func bracketKeys(path string) (pattern string, keys []string) {
	if strings.IndexByte(path, '[') < 0 {
		return path, nil
	}
	var b strings.Builder
	rest := path
	for {
		i := strings.IndexByte(rest, '[')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], ']')
		if j < 0 {
			break
		}
		if k := rest[i+1 : i+j]; k != "*" {
			keys = append(keys, k)
		}
		b.WriteString(rest[:i])
		b.WriteString("[*]")
		rest = rest[i+j+1:]
	}
	b.WriteString(rest)
	return b.String(), keys
}

// All returns the catalogue, sorted by fact path; sysctls beyond the
// listed ones have knobs too (Lookup).
func All() []Knob {
	out := make([]Knob, 0, len(catalogue()))
	for _, e := range catalogue() {
		out = append(out, e.Knob)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// SysctlPath maps a sysctl name to its /proc/sys path. As sysctl(8) does,
// a name with "/" in it (an interface "eth0.100" written "eth0/100")
// swaps the two separators.
func SysctlPath(name string) string {
	if strings.Contains(name, "/") {
		name = strings.Map(func(r rune) rune {
			switch r {
			case '.':
				return '/'
			case '/':
				return '.'
			}
			return r
		}, name)
		return "/proc/sys/" + name
	}
	return "/proc/sys/" + strings.ReplaceAll(name, ".", "/")
}

// SysctlScope is the scope of a sysctl by its name: net sysctls belong to
// a network namespace except those the kernel keeps host-wide.
func SysctlScope(name string) Scope {
	if !strings.HasPrefix(name, "net.") {
		return Host
	}
	for _, p := range hostWideNet {
		if name == p || strings.HasPrefix(name, p+".") {
			return Host
		}
	}
	return NetNS
}

func sysctlKnob(name string) Knob {
	if e, ok := byPath()["sysctl."+name]; ok {
		return e.Knob
	}
	return Knob{Path: "sysctl." + name, Sources: []Source{{SysctlPath(name), Text}}, Method: Sysctl, Scope: SysctlScope(name),
		NetNSReadOnly: netnsReadOnly[name]}
}

// ForFile finds the knob whose source file template matches a host path,
// with its keys bound: what tune uses for a journal entry that names only
// a file. ok is false for a file the catalogue does not know.
func ForFile(p string) (Knob, bool) {
	if name, ok := strings.CutPrefix(p, "/proc/sys/"); ok {
		// As sysctl(8) names them: a dot inside a path element (a VLAN
		// interface "eth0.100") becomes "/".
		segs := strings.Split(name, "/")
		for i, seg := range segs {
			segs[i] = strings.ReplaceAll(seg, ".", "/")
		}
		return sysctlKnob(strings.Join(segs, ".")), true
	}
	for _, e := range catalogue() {
		for i, s := range e.Sources {
			if keys, ok := matchTemplate(s.File, p); ok {
				// a file of a later source comes first, so Resolve picks it
				return e.Knob.Prefer(i).With(keys...), true
			}
		}
	}
	return Knob{}, false
}

func matchTemplate(tmpl, p string) ([]string, bool) {
	if !strings.Contains(tmpl, "{") {
		return nil, tmpl == p
	}
	re := templateRE(tmpl)
	m := re.FindStringSubmatch(p)
	if m == nil {
		return nil, false
	}
	return m[1:], true
}

func templateRE(tmpl string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, loc := range keyRE().FindAllStringSubmatchIndex(tmpl, -1) {
		b.WriteString(regexp.QuoteMeta(tmpl[last:loc[0]]))
		if tmpl[loc[2]:loc[3]] == "cgroup" {
			b.WriteString("(/.*|)") // a cgroup path: "" for the root, else /a/b
		} else {
			b.WriteString("([^/]+)")
		}
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(tmpl[last:]))
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// Instances lists the bound instances of a knob on fs: every device,
// queue, CPU or IRQ whose file exists (a cgroup knob: the cgroups one
// level below the root); the knob itself when it has no keys and its file
// exists. Nothing for a boot knob.
func (k Knob) Instances(fs hostfs.FS) []Knob {
	var out []Knob
	seen := map[string]bool{}
	for _, s := range k.Sources {
		pats := []string{s.File}
		if strings.Contains(s.File, "{cgroup}") {
			pats = []string{strings.Replace(s.File, "{cgroup}", "", 1), strings.Replace(s.File, "{cgroup}", "/*", 1)}
		}
		for _, pat := range pats {
			glob := keyRE().ReplaceAllString(pat, "*")
			matches, _ := fs.Glob(glob)
			for _, m := range matches {
				keys, ok := matchTemplate(s.File, m)
				if !ok || seen[strings.Join(keys, "\x00")] {
					continue
				}
				seen[strings.Join(keys, "\x00")] = true
				out = append(out, k.With(keys...))
			}
		}
	}
	return out
}

// FromFact turns a value as the snapshot fact shows it (compare's diff
// values: "true" for cpu.boost, a CPU list, -1 for an unlimited cgroup)
// into the file value for the file that backs the knob on fs: cpu.boost
// true is no_turbo 0 where intel_pstate backs it, -1 is "max" in cgroup v2.
func (k Knob) FromFact(fs hostfs.FS, v string) (string, error) {
	_, f, err := k.Resolve(fs)
	if err != nil {
		return "", err
	}
	return fromFact(f, v)
}

func fromFact(f Format, v string) (string, error) {
	s := strings.TrimSpace(v)
	switch f {
	case NotBool:
		switch s {
		case "true", "1":
			return "0", nil
		case "false", "0":
			return "1", nil
		}
		return "", fmt.Errorf("%q is not true or false", short(s))
	case Max:
		if s == "-1" {
			return "max", nil
		}
	}
	return Encode(f, s)
}

// FileValue is FromFact for the knob's first source, without a host to
// look at: for a caller that chose the source (Prefer) from what it knows
// of the host, such as a snapshot.
func (k Knob) FileValue(fact string) (string, error) {
	if len(k.Sources) == 0 {
		return "", fmt.Errorf("%s has no file: it is set at boot", k.Path)
	}
	return fromFact(k.Sources[0].Format, fact)
}

// Prefer returns the knob with source i first: the cgroup v1 file on a v1
// host, intel_pstate's no_turbo for cpu.boost. Out of range leaves k as
// it is.
func (k Knob) Prefer(i int) Knob {
	if i <= 0 || i >= len(k.Sources) {
		return k
	}
	src := append([]Source{k.Sources[i]}, k.Sources[:i]...)
	k.Sources = append(src, k.Sources[i+1:]...)
	return k
}

// HostWideNet lists the net sysctls (and subtrees) that exist only in the
// initial network namespace, sorted.
func HostWideNet() []string {
	out := append([]string(nil), hostWideNet...)
	sort.Strings(out)
	return out
}
