package trace

import (
	"bufio"
	"debug/elf"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/hostfs"
)

type sym struct {
	addr uint64
	name string
}

// symtab is a sorted symbol table; lookup finds the symbol at or below an
// address.
type symtab []sym

func (t symtab) lookup(a uint64) (string, bool) {
	i := sort.Search(len(t), func(i int) bool { return t[i].addr > a }) - 1
	if i < 0 {
		return "", false
	}
	return t[i].name, true
}

// kallsyms reads the kernel's symbols. With kernel.kptr_restrict hiding
// them every address reads 0 and the table is empty.
func kallsyms(fs hostfs.FS) symtab {
	s, err := fs.ReadString("/proc/kallsyms")
	if err != nil {
		return nil
	}
	var t symtab
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		switch f[1] {
		case "t", "T", "w", "W":
		default:
			continue
		}
		a, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil || a == 0 {
			continue
		}
		t = append(t, sym{a, f[2]})
	}
	sort.Slice(t, func(i, j int) bool { return t[i].addr < t[j].addr })
	return t
}

// mapping is one executable mapping of a process.
type mapping struct {
	start, end, off uint64
	path            string
}

// elfFile is what symbolisation needs of an ELF file.
type elfFile struct {
	syms  symtab
	loads []elf.ProgHeader
}

// symbolizer names user and kernel addresses; it caches ELF files and
// process maps.
type symbolizer struct {
	fs     hostfs.FS
	kernel symtab
	maps   map[uint32][]mapping
	elves  map[string]*elfFile
}

func newSymbolizer(fs hostfs.FS) *symbolizer {
	return &symbolizer{fs: fs, kernel: kallsyms(fs), maps: map[uint32][]mapping{}, elves: map[string]*elfFile{}}
}

func (s *symbolizer) kernelName(a uint64) string {
	if n, ok := s.kernel.lookup(a); ok {
		return n
	}
	return "[unknown]"
}

func (s *symbolizer) procMaps(pid uint32) []mapping {
	if m, ok := s.maps[pid]; ok {
		return m
	}
	var out []mapping
	txt, err := s.fs.ReadString(fmt.Sprintf("/proc/%d/maps", pid))
	if err == nil {
		out = parseMaps(txt)
	}
	s.maps[pid] = out
	return out
}

// parseMaps keeps the executable file mappings of /proc/PID/maps.
func parseMaps(txt string) []mapping {
	var out []mapping
	for _, l := range strings.Split(txt, "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || !strings.Contains(f[1], "x") || !strings.HasPrefix(f[5], "/") {
			continue
		}
		se := strings.SplitN(f[0], "-", 2)
		if len(se) != 2 {
			continue
		}
		a, err1 := strconv.ParseUint(se[0], 16, 64)
		b, err2 := strconv.ParseUint(se[1], 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		out = append(out, mapping{a, b, off, f[5]})
	}
	return out
}

func (s *symbolizer) elf(pid uint32, path string) *elfFile {
	if e, ok := s.elves[path]; ok {
		return e
	}
	e := &elfFile{}
	s.elves[path] = e
	// Through the process's root, so containers' files are found.
	f, err := elf.Open(s.fs.Path(fmt.Sprintf("/proc/%d/root%s", pid, path)))
	if err != nil {
		return e
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			e.loads = append(e.loads, p.ProgHeader)
		}
	}
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := get()
		for _, y := range syms {
			if elf.ST_TYPE(y.Info) == elf.STT_FUNC && y.Value != 0 {
				e.syms = append(e.syms, sym{y.Value, y.Name})
			}
		}
	}
	sort.Slice(e.syms, func(i, j int) bool { return e.syms[i].addr < e.syms[j].addr })
	return e
}

// userName names address a in process pid: the symbol, or the file's base
// name in brackets when it has no symbols.
func (s *symbolizer) userName(pid uint32, a uint64) string {
	for _, m := range s.procMaps(pid) {
		if a < m.start || a >= m.end {
			continue
		}
		e := s.elf(pid, m.path)
		fileOff := a - m.start + m.off
		for _, p := range e.loads {
			if fileOff >= p.Off && fileOff < p.Off+p.Filesz {
				if n, ok := e.syms.lookup(fileOff - p.Off + p.Vaddr); ok {
					return n
				}
			}
		}
		base := m.path[strings.LastIndexByte(m.path, '/')+1:]
		return "[" + base + "]"
	}
	return "[unknown]"
}
