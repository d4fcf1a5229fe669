// Package search is 'perflab tune search': which settings make this
// workload faster on this host, by how much, and which are useless or
// harmful — proved on fresh measurements before anything is kept.
//
// # Engine
//
// The engine (Run) is pure over two seams: a Measurer, which puts the
// target into configurations and measures them in interleaved blocks (Host:
// tune's journal and bench.Interleave, the --state engine; Sim: a seeded
// simulated target), and a Catalogue of knobs with value ladders
// (FromKnobs: the one knob catalogue, internal/knob). Every decision goes
// through internal/effect's Verdict, the one rule.
//
// # Strategy: greedy coordinate ascent, then shrink, then confirm
//
//  1. Screening. Knobs of the probe's area first, one at a time: one
//     interleaved session of Blocks blocks (default 4) measures the current
//     configuration and the current configuration with each ladder value of
//     the knob. A value is kept when its effect's interval (Bonferroni over
//     the knob's values; the step's own paired variance, not pooled: a
//     configuration with tiny buffers is far noisier than one with large
//     ones) lies wholly beyond ±MinGain in the objective's
//     direction and it breaks no constraint in any of its blocks; the best
//     such value joins the current configuration. A second pass retries the
//     rejected knobs whose comparison was made against a configuration that
//     changed after them (tcp_rmem may help only once tcp_wmem is raised).
//     A step that keeps nothing but has a promising value (unclear, no
//     bound broken, and its log-ratio estimate minus the half-width its
//     interval would have at MaxBlocks, same per-block spread, still
//     beyond the margin) runs Blocks more blocks of the same states and is
//     judged on all of them, up to MaxBlocks (default 3·Blocks). After
//     the passes, each knob group (Knob.Group, from the catalogue) none
//     of whose members was kept is tried once with its members set
//     together (the i-th value of each ladder): tcp_rmem and tcp_wmem
//     can each be harmful alone and a gain of ×14 together.
//  2. Shrink. Each kept knob, smallest screening gain first, is taken out
//     and the winner without it measured against the winner: when that is
//     not measurably worse (and breaks no constraint) the knob is dropped.
//  3. Confirmation. One session of Confirm fresh blocks (default 6)
//     measures the untouched baseline, the winner and, for shares, each of
//     its knobs alone. The gain reported is the winner against the baseline
//     in these blocks only (a paired t interval with their own degrees of
//     freedom): none of them took part in choosing the winner, so the
//     winner's curse cannot inflate it. It is confirmed only when its
//     interval clears ±MinGain and every constraint holds in every
//     confirmation block; otherwise the result is "no setting improved
//     PROBE beyond ±margin".
//
// # Error rates and budget
//
// A false gain needs the screening to keep a useless value and then an
// independent confirmation to clear the margin; the confirmation alone
// bounds it by its one-sided α (2.5%), whatever the screening did. The
// seeded simulation (1,000 searches, ±5% per-run drift, a slow trend)
// measures 0 false gains; the screening keeps a useless knob in ~1.9% of
// searches (extension included) and the confirmation rejects them. The budget is counted in runs
// and time: a pass costs Blocks·(values+1) runs per knob; the confirmation
// Confirm·(2 + kept knobs); the shrink 2·Blocks per kept knob. With
// Options.Budget the screening stops before a step that, with the shrink
// and confirmation it would need, would overrun it; the untried knobs are
// listed.
//
// # Safety
//
// OnHost refuses to start over a journal with unreverted changes, reads
// every knob first, writes only through tune's journal, and on return
// (success, failure, Ctrl-C) reverts and checks every knob against its
// value from before; with apply, the confirmed winner is then applied and
// journaled. After kill -9 the journal holds what was applied; 'perflab
// tune revert' restores it (in the same network namespace).
package search
