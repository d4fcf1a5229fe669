// Package render draws folded stacks as interactive flame graphs: an SVG
// (the format people attach to tickets) and a canvas-based HTML page (for
// profiles too big for thousands of SVG elements). Both are single
// self-contained files that work offline: hover for a frame's count and
// share, click to zoom, reset, and regex search with the share of samples
// matched.
//
// Frames are laid out as in FlameGraph's flamegraph.pl, which users know:
// the x axis is the sample population sorted by frame name (not time),
// children merge by name, width is count, and frames narrower than
// MinWidth pixels are omitted. Colours are derived from a hash of the
// function name so a function keeps its colour across graphs; palettes
// choose the hue family (hot, java, the kernel/user split). A differential
// tree (folded "before after" counts) is coloured by the change in each
// frame's own samples: red grew, blue shrank.
package render
