package snapshot

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// cpuInfo is /proc/cpuinfo reduced to what perflab records. procfs picks
// its cpuinfo parser by the GOARCH perflab was built for, but a snapshot of
// a tree captured on another host (an aarch64 server analysed on an x86
// laptop) must parse whatever architecture wrote the file, so perflab
// parses the key/value blocks itself.
type cpuInfo struct {
	first    map[string]string // every key of the first processor block
	count    int               // processor blocks
	packages map[string]bool   // distinct "physical id" values (x86)
	cores    map[string]bool   // distinct "physical id/core id" pairs (x86)
	err      error             // why the file could not be read
}

// cpuInfo returns /proc/cpuinfo, read and parsed once per collection.
func (c *collector) cpuInfo() *cpuInfo {
	if c.cpuinfo == nil {
		data, err := c.fs.ReadFile("/proc/cpuinfo")
		if err != nil {
			c.cpuinfo = &cpuInfo{err: err}
		} else {
			c.cpuinfo = parseCPUInfo(data)
		}
	}
	return c.cpuinfo
}

// parseCPUInfo splits /proc/cpuinfo into blank-line separated blocks of
// "key<tabs>: value" lines. Blocks without a "processor" key (the trailing
// "Hardware" block of 32-bit ARM, the header of s390) contribute their keys
// to first without counting as a processor.
func parseCPUInfo(data []byte) *cpuInfo {
	ci := &cpuInfo{first: map[string]string{}, packages: map[string]bool{}, cores: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20) // grows from 4 KiB as a line needs; a fixed 64 KiB was a tenth of a live audit's allocation
	block := map[string]string{}
	flush := func() {
		if len(block) == 0 {
			return
		}
		if _, ok := block["processor"]; ok {
			ci.count++
			if pkg, ok := block["physical id"]; ok {
				ci.packages[pkg] = true
				core, ok := block["core id"]
				if !ok {
					core = "cpu" + block["processor"] // no core ids: count each CPU
				}
				ci.cores[pkg+"/"+core] = true
			}
		}
		for k, v := range block {
			if _, seen := ci.first[k]; !seen {
				ci.first[k] = v
			}
		}
		block = map[string]string{}
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if k == "processor" {
			// A new processor without a blank line before it (some
			// architectures print no separators) starts a new block.
			if _, dup := block["processor"]; dup {
				flush()
			}
		}
		if _, inCPU := block["processor"]; inCPU && ci.count > 0 && !interestingLater(k) {
			continue // only the first processor block is kept whole
		}
		block[k] = strings.TrimSpace(v)
	}
	flush()
	if err := sc.Err(); err != nil {
		ci.err = err
	}
	return ci
}

// interestingLater lists the keys needed from every processor block, not
// only the first: they count sockets and cores when /sys has no topology.
func interestingLater(k string) bool {
	return k == "processor" || k == "physical id" || k == "core id"
}

// isARM reports whether the file was written by an ARM kernel.
func (ci *cpuInfo) isARM() bool {
	_, ok := ci.first["CPU implementer"]
	return ok
}

// arch infers the uname machine from the file's shape, for trees without
// /proc/sys/kernel/arch; reason says why it cannot when arch is "". Each
// architecture's kernel writes its own keys (arch/*/kernel/*cpuinfo*): ARM
// "CPU implementer", s390 "vendor_id: IBM/S390", x86 "vendor_id" with
// "flags", POWER "cpu: POWERn", RISC-V "isa: rv64…", LoongArch "ISA:
// loongarch…", MIPS "cpu model". Like x86's lm flag, the 64-bit marks
// (zarch, rv64, mips64, loongarch64) are what the CPU can run, which is what
// the kernel runs on every server distribution.
func (ci *cpuInfo) arch() (arch, reason string) {
	f := ci.first
	has := func(key, word string) bool { return strings.Contains(" "+f[key]+" ", " "+word+" ") }
	switch {
	case ci.isARM():
		v := leadingDigits(f["CPU architecture"])
		switch {
		case v == "8" || v == "9" || strings.Contains(f["Processor"], "AArch64") || has("Features", "asimd"):
			return "aarch64", ""
		case v != "":
			return "armv" + v + "l", ""
		}
		return "arm", ""
	case strings.HasPrefix(f["vendor_id"], "IBM/S390"):
		if has("features", "zarch") {
			return "s390x", ""
		}
		return "s390", ""
	case f["vendor_id"] != "" && f["flags"] != "":
		// A 32-bit kernel prints fdiv_bug, f00f_bug and coma_bug
		// (arch/x86/kernel/cpu/proc.c, CONFIG_X86_32), also on a CPU with lm.
		if has("flags", "lm") && f["fdiv_bug"] == "" {
			return "x86_64", ""
		}
		return "i686", ""
	case strings.HasPrefix(f["isa"], "rv64"):
		return "riscv64", ""
	case strings.HasPrefix(f["isa"], "rv32"):
		return "riscv32", ""
	case strings.Contains(f["ISA"], "loongarch64") || f["CPU Family"] == "Loongson-64bit":
		return "loongarch64", ""
	case f["cpu model"] != "" && strings.HasPrefix(f["isa"], "mips"):
		if strings.Contains(f["isa"], "mips64") {
			return "mips64", ""
		}
		return "mips", ""
	case strings.HasPrefix(f["cpu"], "POWER") || strings.HasPrefix(f["cpu"], "PPC") || f["platform"] != "" && f["timebase"] != "":
		return "", "/proc/cpuinfo shows a POWER CPU (" + f["cpu"] + ") but not the kernel's byte order (ppc64 or ppc64le), and /proc/sys/kernel/arch is absent"
	case f["vendor_id"] != "":
		return "", "/proc/cpuinfo names vendor " + f["vendor_id"] + " but no architecture perflab knows, and /proc/sys/kernel/arch is absent"
	}
	return "", "neither /proc/sys/kernel/arch nor /proc/cpuinfo tells the architecture"
}

// leadingDigits returns the decimal digits a string starts with ("6" of
// "6TEJ").
func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// flags is the x86 "flags" or ARM "Features" list.
func (ci *cpuInfo) flags() []string {
	if f, ok := ci.first["flags"]; ok {
		return strings.Fields(f)
	}
	return strings.Fields(ci.first["Features"])
}

// hasFlag reports whether the first CPU lists flag.
func (ci *cpuInfo) hasFlag(flag string) bool {
	for _, f := range ci.flags() {
		if f == flag {
			return true
		}
	}
	return false
}

// fill sets the CPU identity fields from the file, in each architecture's
// own keys (the kernels' arch/*/kernel cpuinfo writers), as lscpu reads
// them: x86 vendor_id/model name; ARM the MIDR implementer and part decoded
// through armParts; POWER, ppc and sparc "cpu" (with POWER's "revision" as
// the model id); LoongArch "Model Name"; RISC-V "uarch" (and mvendorid as
// the vendor, the raw JEDEC id lscpu prints too); s390 names no model at
// all, only the machine type. What a file does not say is recorded in
// Unavailable by the caller.
func (ci *cpuInfo) fill(cpu *CPU) {
	f := ci.first
	switch {
	case ci.isARM():
		impl := strings.ToLower(f["CPU implementer"])
		part := strings.ToLower(f["CPU part"])
		cpu.Vendor = armVendors()[impl]
		if cpu.Vendor == "" {
			cpu.Vendor = "implementer " + impl
		}
		cpu.Family = f["CPU architecture"]
		cpu.ModelID = part
		cpu.Stepping = f["CPU variant"]
		if rev := f["CPU revision"]; cpu.Stepping != "" && rev != "" {
			if v, err := strconv.ParseInt(cpu.Stepping, 0, 64); err == nil {
				cpu.Stepping = fmt.Sprintf("r%dp%s", v, rev) // lscpu's form
			}
		}
		switch name, ok := armParts()[impl+"/"+part]; {
		case ok:
			cpu.Model = name
		case f["model name"] != "" && !strings.HasPrefix(f["model name"], "ARMv"):
			cpu.Model = f["model name"]
		}
	case strings.HasPrefix(f["vendor_id"], "IBM/S390"):
		cpu.Vendor = f["vendor_id"]
		cpu.ModelID = machineType(f)
	case f["vendor_id"] != "":
		cpu.Vendor = f["vendor_id"]
		cpu.Model = f["model name"]
		cpu.Family = f["cpu family"]
		cpu.ModelID = f["model"]
		cpu.Stepping = f["stepping"]
		cpu.Microcode = f["microcode"]
	case f["Model Name"] != "": // LoongArch
		cpu.Model = f["Model Name"]
		cpu.Family = f["CPU Family"]
		cpu.ModelID = f["PRID"]
	case f["isa"] != "" && (f["mvendorid"] != "" || f["uarch"] != "" || strings.HasPrefix(f["isa"], "rv")):
		cpu.Vendor = f["mvendorid"]
		cpu.Model = f["uarch"]
		cpu.Family = f["marchid"]
		cpu.ModelID = f["mimpid"]
	case f["cpu"] != "": // POWER, ppc, sparc
		cpu.Model = f["cpu"]
		cpu.ModelID = f["revision"]
	}
}

// machineType is the s390 machine type, which cpuinfo repeats per CPU as
// "machine = 2964".
func machineType(f map[string]string) string {
	for k, v := range f {
		if !strings.HasPrefix(k, "processor ") {
			continue
		}
		if _, m, ok := strings.Cut(v, "machine = "); ok {
			return strings.Fields(m + " ")[0]
		}
	}
	return ""
}

// caches parses s390's "cacheN : level=1 type=Data scope=Private
// size=128K line_size=256 associativity=8" lines.
func (ci *cpuInfo) caches() []Cache {
	var cs []Cache
	for k, v := range ci.first {
		if !strings.HasPrefix(k, "cache") || !strings.Contains(v, "level=") {
			continue
		}
		var ch Cache
		for _, kv := range strings.Fields(v) {
			key, val, _ := strings.Cut(kv, "=")
			switch key {
			case "level":
				ch.Level, _ = strconv.Atoi(val)
			case "type":
				ch.Type = val
			case "size":
				ch.SizeKiB, _ = parseSizeKiB(val)
			}
		}
		if ch.Level > 0 && ch.Type != "" {
			cs = append(cs, ch)
		}
	}
	return cs
}

// modelReason says why fill found no model name.
func (ci *cpuInfo) modelReason() string {
	f := ci.first
	switch {
	case strings.HasPrefix(f["vendor_id"], "IBM/S390"):
		return "s390's /proc/cpuinfo names no processor model, only the machine type (cpu.model_id)"
	case ci.isARM():
		return fmt.Sprintf("ARM implementer %s part %s is not in perflab's part table", f["CPU implementer"], f["CPU part"])
	case f["isa"] != "":
		return "RISC-V /proc/cpuinfo has no uarch line (the kernel prints it only where the device tree names the core)"
	}
	return "/proc/cpuinfo has no model name this architecture's kernel writes"
}
