package tune

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/knob"
	"github.com/safchain/ethtool"
)

// knobOf is the catalogue knob a sysctl or file change writes (package
// knob: its file, format and scope). A file the catalogue does not know
// (a journal written by an older perflab) is read and written as text, so
// revert always works.
func knobOf(c audit.Change) (knob.Knob, error) {
	if k, ok := c.Knob(); ok {
		return k, nil
	}
	if c.Kind == audit.KindFile {
		return knob.Knob{Path: c.Target, Sources: []knob.Source{{File: c.Target, Format: knob.Text}}, Method: knob.File, Scope: knob.Host}, nil
	}
	return knob.Knob{}, fmt.Errorf("%s changes are instructions, not knobs", c.Kind)
}

// normalize makes a change's value comparable with what read returns: the
// selected word of a choice list, white space folded, a canonical CPU mask
// or list (the catalogue's Normalize).
func normalize(c audit.Change, v string) string {
	if k, err := knobOf(c); err == nil {
		return k.Normalize(v)
	}
	return strings.Join(strings.Fields(v), " ")
}

// path returns the host file behind a sysctl or file change.
func path(c audit.Change) string {
	if k, err := knobOf(c); err == nil {
		return k.Files()[0]
	}
	return c.Target
}

// read returns a knob's current value.
func read(fs hostfs.FS, c audit.Change) (string, error) {
	switch c.Kind {
	case audit.KindSysctl, audit.KindFile:
		k, err := knobOf(c)
		if err != nil {
			return "", err
		}
		return k.Read(fs)
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
		k, err := knobOf(c)
		if err != nil {
			return err
		}
		return k.Write(fs, v)
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
		k, err := knobOf(c)
		if err != nil {
			return err
		}
		p, _, err := k.Resolve(fs)
		if err != nil {
			return err
		}
		err = accessW(fs.Path(p), p)
		if err != nil && k.NetNSReadOnly && fs.Exists(p) {
			return fmt.Errorf("%s is read-only outside the host's initial network namespace (Linux ≥ 6.x): set it on the host (%v)", k.Name(), err)
		}
		return err
	case audit.KindChannels:
		_, err := channels(fs, c.Target)
		return err
	}
	return fmt.Errorf("%s changes are instructions", c.Kind)
}

// netScoped reports whether a change writes a per-network-namespace knob:
// the catalogue's scope; ethtool resolves an interface name in the
// caller's netns.
func netScoped(c audit.Change) bool {
	if c.Kind == audit.KindChannels {
		return true
	}
	if k, ok := c.Knob(); ok {
		return k.Scope == knob.NetNS
	}
	// A file the catalogue does not know: by where it lives.
	return c.Kind == audit.KindFile && (strings.HasPrefix(c.Target, "/proc/sys/net/") || strings.HasPrefix(c.Target, "/sys/class/net/") ||
		strings.HasPrefix(c.Target, "/sys/devices/virtual/net/"))
}

// Read returns a knob's current value as tune compares it (the selected
// word of a choice list, white space folded): what bisect reads before and
// after to prove the host ended as it started.
func Read(fs hostfs.FS, c audit.Change) (string, error) { return read(fs, c) }
