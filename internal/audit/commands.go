package audit

import (
	"fmt"
	"strings"
)

// FixCommands renders changes as the shell commands a person would type.
func FixCommands(cs []Change) string {
	var lines []string
	for _, c := range cs {
		lines = append(lines, command(c, c.Value))
	}
	return strings.Join(lines, "\n")
}

// RevertCommands renders the commands that restore the current values.
func RevertCommands(cs []Change) string {
	var lines []string
	for _, c := range cs {
		if c.Kind == KindCommand || c.Kind == KindBoot {
			lines = append(lines, revertInstruction(c))
			continue
		}
		lines = append(lines, command(c, c.Current))
	}
	return strings.Join(lines, "\n")
}

func command(c Change, v string) string {
	switch c.Kind {
	case KindSysctl:
		return fmt.Sprintf("sysctl -w %s=%s", c.Target, shellQuote(v))
	case KindFile:
		return fmt.Sprintf("echo %s > %s", shellQuote(v), c.Target)
	case KindChannels:
		return fmt.Sprintf("ethtool -L %s combined %s", c.Target, v)
	case KindBoot:
		return fmt.Sprintf("add %q to the kernel command line (e.g. GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub) and reboot", bootParam(c.Target, v))
	default:
		return v
	}
}

func revertInstruction(c Change) string {
	switch c.Kind {
	case KindBoot:
		if c.Current == "" {
			return fmt.Sprintf("remove %q from the kernel command line and reboot", bootParam(c.Target, c.Value))
		}
		return fmt.Sprintf("restore %q on the kernel command line and reboot", bootParam(c.Target, c.Current))
	default:
		if c.Current != "" {
			return c.Current
		}
		return "undo: " + c.Value
	}
}

func bootParam(k, v string) string {
	if v == "" {
		return k
	}
	return k + "=" + v
}

// shellQuote quotes values with spaces or shell metacharacters
// ("4096 87380 16777216" for tcp_rmem).
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"$`\\|&;<>()*?[]#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
