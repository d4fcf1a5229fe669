package snapshot

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// parseMountInfo parses /proc/<pid>/mountinfo into procfs's MountInfo type.
// perflab parses the lines itself because procfs splits them on single
// spaces and keeps the kernel's escapes: on procfs's own fixture line
// "1 1 0:5 /  /root rw,nosuid shared:8 - rootfs rootfs rw" its mount point
// comes out empty, and "/mnt/a\040b" stays escaped.
//
// The format (fs/proc_namespace.c, show_mountinfo; proc(5)):
//
//	ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER-OPTIONS
//
// Root, mount point, fs type and source are mangled by seq_file (space,
// tab, newline and backslash become \040, \011, \012, \134), so no field
// before the " - " separator holds white space or is empty, and runs of
// spaces there are taken as one separator. After it the source may be empty
// (a mount whose source is ""), which the kernel prints as two spaces.
func parseMountInfo(data []byte) ([]*procfs.MountInfo, error) {
	var out []*procfs.MountInfo
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20) // grows from 4 KiB as a line needs; a fixed 64 KiB was a tenth of a live audit's allocation
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseMountInfoLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func parseMountInfoLine(line string) (*procfs.MountInfo, error) {
	before, after, ok := strings.Cut(line, " - ")
	if !ok {
		return nil, fmt.Errorf("no \" - \" separator in %q", clip(line))
	}
	pre := strings.Fields(before)
	if len(pre) < 6 {
		return nil, fmt.Errorf("%d fields before the separator, want at least 6: %q", len(pre), clip(line))
	}
	post := strings.Fields(after)
	switch len(post) {
	case 3:
	case 2: // empty source
		post = []string{post[0], "", post[1]}
	default:
		return nil, fmt.Errorf("%d fields after the separator, want fs type, source and options: %q", len(post), clip(line))
	}
	id, err1 := strconv.Atoi(pre[0])
	parent, err2 := strconv.Atoi(pre[1])
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("mount and parent IDs %q %q are not numbers", pre[0], pre[1])
	}
	m := &procfs.MountInfo{
		MountID:        id,
		ParentID:       parent,
		MajorMinorVer:  pre[2],
		Root:           unmangle(pre[3]),
		MountPoint:     unmangle(pre[4]),
		Options:        mountOptionMap(pre[5]),
		OptionalFields: map[string]string{},
		FSType:         unmangle(post[0]),
		Source:         unmangle(post[1]),
		SuperOptions:   mountOptionMap(post[2]),
	}
	for _, f := range pre[6:] {
		k, v, _ := strings.Cut(f, ":")
		m.OptionalFields[k] = v
	}
	return m, nil
}

// mountOptionMap splits "rw,size=10k" into {"rw": "", "size": "10k"}.
func mountOptionMap(s string) map[string]string {
	out := map[string]string{}
	for _, o := range strings.Split(s, ",") {
		if o == "" {
			continue
		}
		k, v, _ := strings.Cut(o, "=")
		out[k] = v
	}
	return out
}

// unmangle decodes seq_file's backslash-octal escapes (\ooo, three octal
// digits with a value below 256); any other backslash is kept as written.
func unmangle(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
