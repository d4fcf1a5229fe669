package builtin

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/knob"
)

// parseAnonHugePages returns the AnonHugePages total (in bytes) of an
// smaps_rollup file. procfs.ProcSMapsRollup does not carry this field.
func parseAnonHugePages(data []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "AnonHugePages:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("smaps_rollup: bad AnonHugePages line %q", line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<50 {
			return 0, fmt.Errorf("smaps_rollup: bad AnonHugePages value %q", f[0])
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("smaps_rollup: %w", err)
	}
	return 0, fmt.Errorf("smaps_rollup: no AnonHugePages line")
}

// anonHugeBytes reads this process's bytes in transparent huge pages.
func anonHugeBytes() (int64, error) {
	fs, err := hostfs.New("/")
	if err != nil {
		return 0, err
	}
	data, err := fs.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0, err
	}
	return parseAnonHugePages(data)
}

// thpMode returns the transparent huge page mode ("always", "madvise",
// "never") as the knob catalogue reads it through hostfs, or "" when the
// kernel has no THP.
func thpMode() string {
	fs, err := hostfs.New("/")
	if err != nil {
		return ""
	}
	v, err := knob.MustLookup("memory.thp.enabled").Read(fs)
	if err != nil {
		return ""
	}
	return v
}
