// Command ttarx extracts a ttar text archive (the plain-text tar format
// prometheus/procfs and node_exporter keep their /proc and /sys fixtures in)
// into a directory. It is a dev tool for testdata/roots/mkthirdparty.sh, not
// part of perflab.
//
// The format, as the archives use it: records separated by "# ttar - - -"
// comment lines; "Directory: P" + "Mode: NNN"; "Path: P" followed either by
// "SymlinkTo: T" or by "Lines: N", N content lines and "Mode: NNN". In content
// lines a trailing "EOF" (not preceded by a backslash) means the line has no
// newline, "NULLBYTE" is a NUL byte, and "\EOF" / "\NULLBYTE" are the literal
// words.
//
//	go run ./internal/tools/ttarx -strip 1 -o DIR ARCHIVE.ttar [PREFIX...]
//
// With PREFIX arguments only entries under those archive paths (after
// -strip) are written.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	out := flag.String("o", "", "directory to extract into (created)")
	strip := flag.Int("strip", 0, "leading path components to drop")
	flag.Parse()
	if *out == "" || flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: ttarx [-strip N] -o DIR ARCHIVE.ttar [PREFIX...]")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ttarx:", err)
		os.Exit(1)
	}
	defer f.Close()
	n, err := extract(f, *out, *strip, flag.Args()[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "ttarx:", err)
		os.Exit(1)
	}
	fmt.Printf("ttarx: %d entries written to %s\n", n, *out)
}

// entry is one archive record.
type entry struct {
	path    string
	dir     bool
	link    string
	content []byte
	mode    os.FileMode
}

func extract(r io.Reader, dst string, strip int, prefixes []string) (int, error) {
	entries, err := parse(r)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		rel, ok := stripPath(e.path, strip)
		if !ok || !wanted(rel, prefixes) {
			continue
		}
		full := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return n, err
		}
		switch {
		case e.dir:
			err = os.MkdirAll(full, 0o755)
		case e.link != "":
			os.Remove(full)
			err = os.Symlink(e.link, full)
		default:
			mode := e.mode
			if mode == 0 {
				mode = 0o644
			}
			err = os.WriteFile(full, e.content, mode|0o200)
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func stripPath(p string, strip int) (string, bool) {
	p = filepath.Clean(p)
	if filepath.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	parts := strings.Split(p, "/")
	if len(parts) <= strip {
		return "", false
	}
	return filepath.Join(parts[strip:]...), true
}

func wanted(rel string, prefixes []string) bool {
	if len(prefixes) == 0 {
		return true
	}
	for _, p := range prefixes {
		p = strings.TrimSuffix(p, "/")
		if rel == p || strings.HasPrefix(rel, p+"/") || strings.HasPrefix(p, rel+"/") {
			return true
		}
	}
	return false
}

func parse(r io.Reader) ([]entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []entry
	var cur *entry
	lineNo := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		lineNo++
		return sc.Text(), true
	}
	for {
		line, ok := next()
		if !ok {
			break
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "Directory: "):
			out = append(out, entry{path: strings.TrimPrefix(line, "Directory: "), dir: true})
			cur = &out[len(out)-1]
		case strings.HasPrefix(line, "Path: "):
			out = append(out, entry{path: strings.TrimPrefix(line, "Path: ")})
			cur = &out[len(out)-1]
		case strings.HasPrefix(line, "SymlinkTo: "):
			if cur == nil {
				return nil, fmt.Errorf("line %d: SymlinkTo before Path", lineNo)
			}
			cur.link = strings.TrimPrefix(line, "SymlinkTo: ")
		case strings.HasPrefix(line, "Lines: "):
			if cur == nil {
				return nil, fmt.Errorf("line %d: Lines before Path", lineNo)
			}
			n, err := strconv.Atoi(strings.TrimPrefix(line, "Lines: "))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("line %d: bad line count %q", lineNo, line)
			}
			var buf bytes.Buffer
			for i := 0; i < n; i++ {
				l, ok := next()
				if !ok {
					return nil, fmt.Errorf("line %d: archive ends inside %s", lineNo, cur.path)
				}
				buf.WriteString(decodeLine(l))
			}
			cur.content = buf.Bytes()
		case strings.HasPrefix(line, "Mode: "):
			if cur == nil {
				return nil, fmt.Errorf("line %d: Mode before Path", lineNo)
			}
			m, err := strconv.ParseUint(strings.TrimPrefix(line, "Mode: "), 8, 32)
			if err != nil {
				return nil, fmt.Errorf("line %d: bad mode %q", lineNo, line)
			}
			cur.mode = os.FileMode(m) & 0o777
		default:
			return nil, fmt.Errorf("line %d: unknown keyword: %q", lineNo, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no entries")
	}
	return out, nil
}

// decodeLine turns one archived content line back into its bytes, newline
// included unless the line ends in an unescaped EOF marker.
func decodeLine(l string) string {
	newline := "\n"
	if strings.HasSuffix(l, "EOF") && !strings.HasSuffix(l, `\EOF`) {
		l = strings.TrimSuffix(l, "EOF")
		newline = ""
	}
	var b strings.Builder
	for i := 0; i < len(l); {
		switch {
		case strings.HasPrefix(l[i:], `\NULLBYTE`):
			b.WriteString("NULLBYTE")
			i += len(`\NULLBYTE`)
		case strings.HasPrefix(l[i:], "NULLBYTE"):
			b.WriteByte(0)
			i += len("NULLBYTE")
		case strings.HasPrefix(l[i:], `\EOF`):
			b.WriteString("EOF")
			i += len(`\EOF`)
		default:
			b.WriteByte(l[i])
			i++
		}
	}
	return b.String() + newline
}
