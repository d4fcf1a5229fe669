package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/flame/diff"
	"github.com/perflab/perflab/internal/flame/fold"
	"github.com/perflab/perflab/internal/flame/folded"
	flamerender "github.com/perflab/perflab/internal/flame/render"
	"github.com/perflab/perflab/internal/flame/speedscope"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

func newFlameCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "flame",
		Short: "Fold perf stacks, draw flame graphs, compare profiles, export to speedscope",
		Long: `flame works on perf script output and folded stacks ("comm;root;…;leaf COUNT"
lines, the format of FlameGraph and inferno):

  fold        perf script text → folded stacks (byte-identical to inferno-collapse-perf)
  render      folded stacks → interactive SVG or HTML flame graph
  diff        two folded profiles → differential graph and the functions that changed most
  speedscope  folded stacks → speedscope JSON

'perflab profile' records with perf and does all of this in one step.`,
		Example: `  perf script | perflab flame fold > app.folded
  perflab flame render app.folded -o app.svg --title "app under load"
  perflab flame diff before.folded after.folded -o diff.svg
  perflab flame speedscope app.folded -o app.speedscope.json`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newFlameFoldCmd(e), newFlameRenderCmd(e), newFlameDiffCmd(e), newFlameSpeedscopeCmd(e))
	return cmd
}

// openInput opens a file argument, or standard input for none or "-".
func openInput(e *env, args []string) (io.Reader, func(), error) {
	if len(args) == 0 || args[0] == "-" {
		return e.stdin, func() {}, nil
	}
	f, err := os.Open(args[0])
	if err != nil {
		return nil, nil, clierr.Usagef("check the path", "cannot read %s: %v", args[0], err)
	}
	return f, func() { f.Close() }, nil
}

// readFolded reads folded stacks. Lines that are not folded stacks are
// skipped, as flamegraph.pl and inferno skip them, with one warning per
// input naming how many and the first; an input with no stack is bad input.
func readFolded(e *env, args []string) (*folded.Profile, error) {
	r, done, err := openInput(e, args)
	if err != nil {
		return nil, err
	}
	defer done()
	name := "standard input"
	if len(args) > 0 && args[0] != "-" {
		name = args[0]
	}
	p, err := folded.Read(r)
	if err != nil {
		var fe *folded.FormatError
		if errors.As(err, &fe) {
			return nil, clierr.Usagef("fold perf script output first: perflab flame fold", "%s: %v", name, err)
		}
		return nil, clierr.Usagef("give folded stacks (perflab flame fold or perflab profile -o x.folded)", "%s: %v", name, err)
	}
	if sk := p.Skipped; sk.Lines > 0 {
		fmt.Fprintf(e.stderr, "perflab: warning: %s: skipped %d %s that %s not folded stacks (\"frames count\"), the first at line %d: %q\n",
			name, sk.Lines, flamePlural(sk.Lines, "line", "lines"), flamePlural(sk.Lines, "is", "are"), sk.First, sk.Text)
	}
	return p, nil
}

func flamePlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// graphFormat picks the output format: --format if given, else the -o
// file's extension, else def.
func graphFormat(cmd *cobra.Command, o *outputFlags, def string) (string, error) {
	if cmd.Flags().Changed("format") {
		return o.format, o.validate()
	}
	if err := checkOutputPath(o.output); err != nil {
		return "", err
	}
	ext := strings.ToLower(filepath.Ext(o.output))
	switch {
	case strings.HasSuffix(strings.ToLower(o.output), ".speedscope.json") || ext == ".json":
		if contains(o.allowed, "speedscope") {
			return "speedscope", nil
		}
		return "json", nil
	case ext == ".svg":
		return "svg", nil
	case ext == ".html" || ext == ".htm":
		return "html", nil
	case ext == ".folded" || ext == ".txt":
		return "folded", nil
	}
	return def, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// graphOptions are the render flags shared by render, diff and profile.
type graphOptions struct {
	title, subtitle, colors, countName string
	width                              int
	minWidth                           float64
	reverse, inverted, negate          bool
}

func (g *graphOptions) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&g.title, "title", "", "graph title")
	fl.StringVar(&g.subtitle, "subtitle", "", "second title line")
	fl.StringVar(&g.colors, "colors", "hot", "palette: "+strings.Join(flamerender.Palettes, "|")+" (java: JIT green, kernel orange; kernel: kernel orange, user blue; io: blues, for off-CPU time; wakeup: aqua)")
	fl.StringVar(&g.countName, "countname", "samples", "what a count is, in tooltips and totals: samples, or a unit such as us or ms (off-CPU time), bytes")
	fl.IntVar(&g.width, "width", 1200, "image width in pixels")
	fl.Float64Var(&g.minWidth, "minwidth", 0.1, "omit frames narrower than this many pixels")
	fl.BoolVar(&g.reverse, "reverse", false, "reverse each stack: leaf functions at the root, showing who calls them")
	fl.BoolVar(&g.inverted, "inverted", false, "icicle graph: root at the top")
}

func (g *graphOptions) validate() error {
	if !flamerender.ValidPalette(g.colors) {
		return clierr.Usagef("use one of "+strings.Join(flamerender.Palettes, ", "), "unknown --colors %q", g.colors)
	}
	if g.width < 100 || g.width > 100000 {
		return clierr.Usagef("use 100..100000", "--width %d is out of range", g.width)
	}
	if g.minWidth < 0 {
		return clierr.Usagef("use a value >= 0", "--minwidth %g is negative", g.minWidth)
	}
	return nil
}

func (g *graphOptions) options() flamerender.Options {
	return flamerender.Options{Title: g.title, Subtitle: g.subtitle, Width: g.width, MinWidth: g.minWidth,
		Palette: g.colors, Inverted: g.inverted, CountName: g.countName}
}

// writeGraph writes p in format to w.
func writeGraph(w io.Writer, p *folded.Profile, format string, g *graphOptions, unit string) error {
	switch format {
	case "folded":
		_, err := p.WriteTo(w)
		return err
	case "speedscope":
		name := g.title
		if name == "" {
			name = "perflab profile"
		}
		return speedscope.Write(w, speedscope.Convert(p, name, unit, "perflab "+Version))
	case "svg":
		return flamerender.WriteSVG(w, flamerender.Build(p, g.reverse, g.negate), g.options())
	case "html":
		return flamerender.WriteHTML(w, flamerender.Build(p, g.reverse, g.negate), g.options())
	}
	return clierr.Usagef("use svg, html, folded or speedscope", "unknown graph format %q", format)
}

// ---- fold ----

// flameFoldLong is fold's help: what it writes, its parity with the
// references, its exit codes.
const flameFoldLong = `fold reads 'perf script' text (a file, or standard input) and writes folded
stacks: "comm;root;…;leaf COUNT" lines in byte order, COUNT the sum of the
samples' periods. Only the first event type is folded unless --event-filter
picks one; skipped events are noted on stderr. Lines that are not perf
script are skipped with one warning (how many, and the first), as inferno
does; the stacks around them are folded.

Parity: the output is byte-identical to inferno-collapse-perf with the same
flags, quirks included (tests compare the two on every fixture). FlameGraph's
stackcollapse-perf.pl gives the same output on ordinary C, Go and perf-map
JIT profiles but differs, and fold follows inferno, on: the last stack of an
input with no blank line after it (Perl drops it); event lines that carry
their one frame (Perl drops them); quotes in names (Perl removes " and ');
C++ names with argument lists inside templates or lambdas (Perl cuts
"std::function<int (int, int)>::operator()" at the first "("); Rust legacy
mangling (Perl keeps "$LT$…$GT$" and the "::h<hash>" suffix, inferno
demangles); jitdump frames (jitted-PID-N.so: --jit marks them _[j], Perl
does not); and event lines with padded columns, which the two parse
differently.

Exit codes: 0 stacks folded (lines skipped, if any, are warned about on
stderr); 2 no samples in the input, or no line of it is perf script
(nothing is written); 3 the input could not be read.`

func newFlameFoldCmd(e *env) *cobra.Command {
	var (
		opt     fold.Options
		all     bool
		threads int
		out     outputFlags
	)
	cmd := &cobra.Command{
		Use:   "fold [FILE|-]",
		Short: "Fold perf script output into folded stacks",
		Long:  flameFoldLong,
		Example: `  perf record -e cpu-clock -g -- ./app && perf script | perflab flame fold > app.folded
  perf script -F +pid | perflab flame fold --pid --all > app.folded
  perflab flame fold --event-filter cycles perf.txt -o cycles.folded`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if all {
				opt.Kernel, opt.JIT = true, true
			}
			opt.Threads = threads
			if opt.Threads <= 0 {
				opt.Threads = runtime.GOMAXPROCS(0)
			}
			r, done, err := openInput(e, args)
			if err != nil {
				return err
			}
			defer done()
			res, err := fold.Fold(r, opt)
			if err != nil {
				return clierr.Runtimef("", "reading perf script: %v", err)
			}
			return finishFold(e, res, &out)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opt.PID, "pid", false, "root frames comm-PID (perf script needs the pid field: -F +pid)")
	fl.BoolVar(&opt.TID, "tid", false, "root frames comm-PID/TID")
	fl.BoolVar(&opt.Kernel, "kernel", false, "suffix kernel frames with _[k]")
	fl.BoolVar(&opt.JIT, "jit", false, "suffix JIT frames (/tmp/perf-PID.map) with _[j]")
	fl.BoolVar(&all, "all", false, "all annotations (--kernel --jit)")
	fl.BoolVar(&opt.Addrs, "addrs", false, "name unsymbolised frames [module <address>]")
	fl.StringVar(&opt.EventFilter, "event-filter", "", "fold only this event (default: the first event type seen)")
	fl.IntVarP(&threads, "jobs", "j", 0, "parser threads (default: all CPUs)")
	out.register(cmd, "folded", "folded")
	return cmd
}

// finishFold writes the folded stacks and reports what was skipped.
func finishFold(e *env, res *fold.Result, out *outputFlags) error {
	st := res.Stats
	if len(st.Skipped) > 0 {
		evs := make([]string, 0, len(st.Skipped))
		for ev, n := range st.Skipped {
			evs = append(evs, fmt.Sprintf("%d %q", n, ev))
		}
		sort.Strings(evs)
		fmt.Fprintf(e.stderr, "perflab: note: folded only %q samples; skipped %s (use --event-filter to pick)\n", st.Event, strings.Join(evs, ", "))
	}
	if len(res.Profile.Stacks) == 0 {
		if st.WeirdEvents+st.WeirdStacks > 0 {
			return clierr.Usagef("give the text output of 'perf script' (after 'perf record -g')",
				"input is not perf script output: %d lines not understood, first: %q", st.WeirdEvents+st.WeirdStacks, st.FirstWeird)
		}
		return clierr.Usagef("record with 'perf record -g' and pipe 'perf script' output in", "no samples in the input (%d lines read)", st.Lines)
	}
	w, commit, err := out.open(e.stdout)
	if err != nil {
		return err
	}
	if _, err := res.Profile.WriteTo(w); err != nil {
		return err
	}
	if err := commit(); err != nil {
		return err
	}
	// Odd lines among good ones are what inferno-collapse-perf warns about
	// and folds around (perf script of a live system has them): the
	// stacks are right, so this is a warning, not a failure.
	if n := st.WeirdEvents + st.WeirdStacks; n > 0 {
		fmt.Fprintf(e.stderr, "perflab: warning: skipped %d %s that %s not perf script (first: %q); the stacks around them were folded\n",
			n, flamePlural(int(n), "line", "lines"), flamePlural(int(n), "is", "are"), st.FirstWeird)
	}
	if st.Unterminated {
		fmt.Fprintf(e.stderr, "perflab: warning: the input ends in the middle of a line (perf script ends every line): truncated? Its last stack was folded as read\n")
	}
	return nil
}

// ---- render ----

func newFlameRenderCmd(e *env) *cobra.Command {
	var (
		g   graphOptions
		out outputFlags
	)
	cmd := &cobra.Command{
		Use:   "render [FILE|-]",
		Short: "Draw folded stacks as an interactive flame graph (SVG or HTML)",
		Long: `render draws folded stacks (or a differential "stack before after" file from
'flame diff -o x.folded') as a flame graph: hover for a frame's count and
share, click to zoom, Reset Zoom, and Search (Ctrl-F) with a regular
expression that reports the share of samples matched. Colours are a hash of
the function name, so a function keeps its colour across graphs. The HTML
variant draws on a canvas and stays fast on very large profiles; both are
single files that work offline. The format follows -o's extension (.svg,
.html, .folded, .speedscope.json) unless --format is given.`,
		Example: `  perflab flame render app.folded -o app.svg
  perflab flame render app.folded -o app.html --colors java --title "checkout service"
  perflab flame render app.folded -o callers.svg --reverse --inverted
  perflab flame render offcpu.folded -o offcpu.svg --colors io --countname us --title "Off-CPU Time"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := graphFormat(cmd, &out, "svg")
			if err != nil {
				return err
			}
			if err := g.validate(); err != nil {
				return err
			}
			p, err := readFolded(e, args)
			if err != nil {
				return err
			}
			w, commit, err := out.open(e.stdout)
			if err != nil {
				return err
			}
			if err := writeGraph(w, p, format, &g, "none"); err != nil {
				return err
			}
			return commit()
		},
	}
	g.register(cmd)
	cmd.Flags().BoolVar(&g.negate, "negate", false, "differential input: swap red and blue")
	out.register(cmd, "svg", "svg", "html", "folded", "speedscope")
	return cmd
}

// ---- diff ----

func newFlameDiffCmd(e *env) *cobra.Command {
	var f flameDiffFlags
	cmd := &cobra.Command{
		Use:   "diff BEFORE AFTER",
		Short: "Compare two folded profiles: differential flame graph and the functions that changed",
		Long: `diff joins two folded profiles and prints the functions whose share of the
profile changed most, inclusive (stacks they are on) and self (stacks they
end), before → after in percent. With -o it also writes the differential
profile: .folded gives "stack before after" lines (as FlameGraph's
difffolded.pl), .svg/.html a differential flame graph whose widths are the
AFTER profile and whose colours are the change in each frame's own samples:
red grew, blue shrank. --normalize scales BEFORE to AFTER's total first
(recommended when the profiles differ in length), truncating each count as
difffolded.pl -n and inferno-diff-folded do; --strip-hex replaces every
"0x" + hex digits with "0x..." (difffolded.pl -s), for frames named by
address; --negate swaps the hues.`,
		Example: `  perflab flame diff jdk8u74.folded jdk8u202.folded
  perflab flame diff before.folded after.folded --normalize -o diff.svg
  perflab flame diff before.folded after.folded -o diff.folded --top 30`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runFlameDiff(cmd, e, &f, args) },
	}
	f.g.register(cmd)
	cmd.Flags().BoolVarP(&f.dopt.Normalize, "normalize", "n", false, "scale BEFORE's counts to AFTER's total (truncated, as difffolded.pl -n)")
	cmd.Flags().BoolVarP(&f.dopt.StripHex, "strip-hex", "s", false, `replace hex numbers ("0x7f3a…") in frames with "0x..." so addresses match across runs`)
	cmd.Flags().BoolVar(&f.g.negate, "negate", false, "swap red and blue (grew ↔ shrank)")
	cmd.Flags().IntVar(&f.top, "top", 15, "rows in the table (0: all)")
	f.out.register(cmd, "text", "text", "json", "folded", "svg", "html")
	return cmd
}

type flameDiffFlags struct {
	g    graphOptions
	out  outputFlags
	dopt diff.Options
	top  int
}

func runFlameDiff(cmd *cobra.Command, e *env, f *flameDiffFlags, args []string) error {
	format, err := graphFormat(cmd, &f.out, "text")
	if err != nil {
		return err
	}
	if err := f.g.validate(); err != nil {
		return err
	}
	before, after, err := readFoldedPair(e, args)
	if err != nil {
		return err
	}
	d := diff.Join(before, after, f.dopt)
	// Shares do not depend on scaling: the table is computed on the counts
	// as recorded, so its totals are real and no truncation by --normalize
	// skews a share.
	raw := d
	if f.dopt.Normalize {
		raw = diff.Join(before, after, diff.Options{StripHex: f.dopt.StripHex})
	}
	rows := diff.Table(raw, f.top)
	if format == report.FormatJSON {
		return writeOut(&f.out, e.stdout, func(w io.Writer) error { return writeJSON(w, rows) })
	}
	tableOut := e.stdout
	if format != report.FormatText {
		// The graph goes to -o (or standard output, and then the
		// table to standard error so a pipeline gets only the graph).
		if f.out.output == "" || f.out.output == "-" {
			tableOut = e.stderr
		}
		if f.g.title == "" {
			f.g.title = "Differential Flame Graph: " + filepath.Base(args[0]) + " → " + filepath.Base(args[1])
		}
		if err := writeOut(&f.out, e.stdout, func(w io.Writer) error { return writeGraph(w, d, format, &f.g, "none") }); err != nil {
			return err
		}
	}
	return diff.WriteTable(tableOut, rows, termfmt.Style{On: termfmt.ColorEnabled(tableOut)})
}

// readFoldedPair reads the BEFORE and AFTER profiles of diff.
func readFoldedPair(e *env, args []string) (before, after *folded.Profile, err error) {
	if before, err = readFolded(e, args[:1]); err != nil {
		return nil, nil, err
	}
	after, err = readFolded(e, args[1:])
	return before, after, err
}

// ---- speedscope ----

func newFlameSpeedscopeCmd(e *env) *cobra.Command {
	var (
		out  outputFlags
		unit string
		name string
	)
	cmd := &cobra.Command{
		Use:   "speedscope [FILE|-]",
		Short: "Export folded stacks as speedscope JSON",
		Long: `speedscope converts folded stacks into speedscope's file format
(https://www.speedscope.app/file-format-schema.json): one sampled profile whose
samples are the unique stacks weighted by their counts. Open the file at
speedscope.app or with the speedscope CLI; nothing is uploaded by perflab.`,
		Example: `  perflab flame speedscope app.folded -o app.speedscope.json
  perflab flame speedscope app.folded --unit nanoseconds > app.json   # cpu-clock periods are ns`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if !contains(speedscope.Units, unit) {
				return clierr.Usagef("use one of "+strings.Join(speedscope.Units, ", "), "unknown --unit %q", unit)
			}
			p, err := readFolded(e, args)
			if err != nil {
				return err
			}
			if name == "" {
				name = "perflab profile"
				if len(args) > 0 && args[0] != "-" {
					name = filepath.Base(args[0])
				}
			}
			w, commit, err := out.open(e.stdout)
			if err != nil {
				return err
			}
			if err := speedscope.Write(w, speedscope.Convert(p, name, unit, "perflab "+Version)); err != nil {
				return err
			}
			return commit()
		},
	}
	cmd.Flags().StringVar(&unit, "unit", "none", "what a count is: "+strings.Join(speedscope.Units, "|"))
	cmd.Flags().StringVar(&name, "name", "", "profile name shown in speedscope (default: the file name)")
	out.register(cmd, "speedscope", "speedscope")
	return cmd
}
