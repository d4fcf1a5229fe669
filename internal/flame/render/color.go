package render

import (
	"fmt"
	"strings"
)

// Palettes name the colour schemes --colors accepts. The names and
// colours of hot, mem, io and wakeup are FlameGraph's and inferno's: io
// (blues) is the one for off-CPU time and I/O, wakeup (aqua) for wakeup
// stacks.
var Palettes = []string{"hot", "java", "kernel", "mem", "io", "wakeup"}

// background is the gradient behind the frames, as FlameGraph picks it
// per palette: blue for io and wakeup, green for mem, else yellow.
func background(palette string) (top, bottom string) {
	switch palette {
	case "io", "wakeup":
		return "#eeeeee", "#e0e0ff"
	case "mem":
		return "#eef2ee", "#e0ffe0"
	}
	return "#eeeeee", "#eeeeb0"
}

// ValidPalette reports whether p is a known palette.
func ValidPalette(p string) bool {
	for _, x := range Palettes {
		if x == p {
			return true
		}
	}
	return false
}

// rgb is a colour.
type rgb struct{ r, g, b uint8 }

func (c rgb) String() string { return fmt.Sprintf("rgb(%d,%d,%d)", c.r, c.g, c.b) }

// hash3 derives three numbers in [0,1) from a function name, so a function
// has the same colour in every graph (and in the before and after graphs
// of a comparison): colour carries identity, not meaning.
func hash3(name string) (float64, float64, float64) {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	// three 16-bit slices after a final mix
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return float64(h&0xffff) / 65536, float64((h>>16)&0xffff) / 65536, float64((h>>32)&0xffff) / 65536
}

func scale(base, span float64, v float64) uint8 { return uint8(base + span*v) }

// hue returns a colour from a named family, varied by the name's hash.
func hue(family string, v1, v2, v3 float64) rgb {
	switch family {
	case "red":
		return rgb{scale(200, 55, v1), scale(50, 80, v2), scale(50, 80, v2)}
	case "green":
		return rgb{scale(50, 60, v1), scale(190, 60, v2), scale(50, 60, v1)}
	case "aqua":
		return rgb{scale(50, 60, v1), scale(165, 55, v2), scale(165, 55, v2)}
	case "yellow":
		return rgb{scale(175, 55, v1), scale(175, 55, v1), scale(50, 20, v2)}
	case "orange":
		return rgb{scale(190, 65, v1), scale(90, 65, v2), 0}
	case "blue":
		return rgb{scale(80, 60, v1), scale(80, 60, v1), scale(190, 55, v2)}
	case "purple":
		return rgb{scale(190, 65, v1), scale(80, 60, v1), scale(190, 65, v2)}
	}
	// hot: red through yellow
	return rgb{scale(205, 50, v3), scale(0, 230, v1), scale(0, 55, v2)}
}

// frameColor colours a frame of a normal (non-differential) graph.
func frameColor(palette, name string, kind Kind) rgb {
	v1, v2, v3 := hash3(name)
	switch palette {
	case "java":
		// JIT-compiled code green, inlined aqua, kernel orange, C++
		// yellow, other native code red: where the time goes by runtime.
		switch {
		case kind == JIT:
			return hue("green", v1, v2, v3)
		case kind == Inlined:
			return hue("aqua", v1, v2, v3)
		case kind == Kernel:
			return hue("orange", v1, v2, v3)
		case strings.Contains(name, "::"):
			return hue("yellow", v1, v2, v3)
		case strings.Contains(name, "/") || strings.HasPrefix(name, "java") || strings.HasPrefix(name, "Interpreter"):
			return hue("green", v1, v2, v3)
		}
		return hue("red", v1, v2, v3)
	case "kernel":
		// The kernel/user split: system time orange, user time blue.
		if kind == Kernel {
			return hue("orange", v1, v2, v3)
		}
		if kind == JIT {
			return hue("green", v1, v2, v3)
		}
		return hue("blue", v1, v2, v3)
	case "mem":
		return hue("green", v1, v2, v3)
	case "io":
		return hue("blue", v1, v2, v3)
	case "wakeup":
		return hue("aqua", v1, v2, v3)
	}
	return hue("hot", v1, v2, v3)
}

// diffColor colours a frame of a differential graph by the change of its
// own samples: red grew, blue shrank, white unchanged, saturated in
// proportion to the largest change in the graph.
func diffColor(delta, maxDelta int64) rgb {
	if delta == 0 || maxDelta == 0 {
		return rgb{250, 250, 250}
	}
	f := float64(abs(delta)) / float64(maxDelta)
	c := uint8(210 * (1 - f))
	if delta > 0 {
		return rgb{255, c, c}
	}
	return rgb{c, c, 255}
}
