package tune

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/safchain/ethtool"
)

// bracketed matches the kernel's "a [b] c" choice lists (THP, schedulers).
var bracketed = regexp.MustCompile(`\[([^\]]+)\]`)

// normalize makes a knob's read value comparable with what is written:
// the selected word of a choice list, white space folded.
func normalize(v string) string {
	if m := bracketed.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return strings.Join(strings.Fields(v), " ")
}

// path returns the host file behind a sysctl or file change.
func path(c audit.Change) string {
	if c.Kind == audit.KindSysctl {
		return audit.SysctlPath(c.Target)
	}
	return c.Target
}

// read returns a knob's current value.
func read(fs hostfs.FS, c audit.Change) (string, error) {
	switch c.Kind {
	case audit.KindSysctl, audit.KindFile:
		b, err := fs.ReadFile(path(c))
		if err != nil {
			return "", err
		}
		return normalize(string(b)), nil
	case audit.KindChannels:
		ch, err := channels(fs, c.Target)
		if err != nil {
			return "", err
		}
		return strconv.Itoa(int(ch.CombinedCount)), nil
	}
	return "", fmt.Errorf("%s changes are instructions, not knobs", c.Kind)
}

// write sets a knob.
func write(fs hostfs.FS, c audit.Change, v string) error {
	switch c.Kind {
	case audit.KindSysctl, audit.KindFile:
		return fs.WriteFile(path(c), []byte(v+"\n"))
	case audit.KindChannels:
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("channel count %q is not a number", v)
		}
		if !fs.Live() {
			return errors.New("NIC channels can only be changed on the live host")
		}
		e, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		defer e.Close()
		ch, err := e.GetChannels(c.Target)
		if err != nil {
			return err
		}
		ch.CombinedCount = uint32(n)
		_, err = e.SetChannels(c.Target, ch)
		return err
	}
	return fmt.Errorf("%s changes are instructions, not knobs", c.Kind)
}

func channels(fs hostfs.FS, nic string) (ethtool.Channels, error) {
	if !fs.Live() {
		return ethtool.Channels{}, errors.New("NIC channels can only be read on the live host")
	}
	e, err := ethtool.NewEthtool()
	if err != nil {
		return ethtool.Channels{}, err
	}
	defer e.Close()
	return e.GetChannels(nic)
}

// writable reports why a knob cannot be written, or nil.
func writable(fs hostfs.FS, c audit.Change) error {
	switch c.Kind {
	case audit.KindSysctl, audit.KindFile:
		return accessW(fs.Path(path(c)), path(c))
	case audit.KindChannels:
		_, err := channels(fs, c.Target)
		return err
	}
	return fmt.Errorf("%s changes are instructions", c.Kind)
}

// Read returns a knob's current value as tune compares it (the selected
// word of a choice list, white space folded): what bisect reads before and
// after to prove the host ended as it started.
func Read(fs hostfs.FS, c audit.Change) (string, error) { return read(fs, c) }
