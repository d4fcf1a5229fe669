package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/snapshot"
)

// A fleet report needs little of each host's snapshot: its grouping
// identity, its setting and identity facts, and its audit outcomes. Schema
// 5 keeps that beside the snapshot, computed when the snapshot is stored
// (docs/fleet-scale.md): snapshot_facts names each snapshot's fact set,
// and fact_sets holds each distinct set once (hosts built alike share one),
// so a report over ten thousand hosts reads ten thousand short rows and a
// few dozen documents instead of decoding 35 KB per host.
//
// The store does not interpret snapshots: what a fact set holds is made by
// the fleet package's code (the same that reads it), registered here with
// RegisterSummarizer. A store written without one (a program that does not
// link the fleet package) stores no summaries, and a report reads those
// snapshots the slow way.

// Summarizer reduces a snapshot to its fact-set document.
type Summarizer func(*snapshot.Snapshot) ([]byte, error)

var summarizer struct {
	version int
	fn      Summarizer
}

// RegisterSummarizer sets the code that makes a snapshot's fact set and its
// version: a report uses only fact sets of the version it reads, so a
// change in what a set holds or means must bump it.
func RegisterSummarizer(version int, fn Summarizer) {
	summarizer.version, summarizer.fn = version, fn
}

// SummaryVersion is the version of the registered summarizer (0: none).
func SummaryVersion() int { return summarizer.version }

// factSet is one snapshot's summary ready to write.
type factSet struct {
	snapshot, id string
	doc          []byte
}

// summarize makes the fact sets of snaps with every CPU (a bulk load
// summarizes thousands); a snapshot that cannot be summarized gets none.
func summarize(snaps []*snapshot.Snapshot) []factSet {
	fn := summarizer.fn
	if fn == nil || len(snaps) == 0 {
		return nil
	}
	out := make([]factSet, len(snaps))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(snaps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				doc, err := fn(snaps[i])
				if err != nil {
					continue
				}
				sum := sha256.Sum256(doc)
				out[i] = factSet{snapshot: snaps[i].ID, id: hex.EncodeToString(sum[:16]), doc: doc}
			}
		}()
	}
	for i := range snaps {
		next <- i
	}
	close(next)
	wg.Wait()
	kept := out[:0]
	for _, f := range out {
		if f.doc != nil {
			kept = append(kept, f)
		}
	}
	return kept
}

// SaveSummaries computes and writes the fact sets of snaps, stored in the
// same transaction tx (for writers outside this file: a bulk load of
// snapshots by COPY calls it after the copy).
func (s *Store) SaveSummaries(ctx context.Context, tx execer, snaps []*snapshot.Snapshot) error {
	return s.writeFactSets(ctx, tx, summarize(snaps), false)
}

// writeFactSets writes sets in batches, the distinct documents first in id
// order (concurrent writers of the same sets then lock them in one order).
// replace: a snapshot's set replaces the one stored (a migration that
// re-summarizes); else a snapshot keeps the set it has.
func (s *Store) writeFactSets(ctx context.Context, tx execer, sets []factSet, replace bool) error {
	if len(sets) == 0 {
		return nil
	}
	docs := map[string][]byte{}
	for _, f := range sets {
		docs[f.id] = f.doc
	}
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	const batch = 200
	for start := 0; start < len(ids); start += batch {
		part := ids[start:min(start+batch, len(ids))]
		args := make([]any, 0, 2*len(part))
		for _, id := range part {
			args = append(args, id, string(docs[id]))
		}
		q := `INSERT INTO fact_sets (id, doc) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?), ", len(part)), ", ") + ` ON CONFLICT (id) DO NOTHING`
		if _, err := tx.ExecContext(ctx, s.q(q), args...); err != nil {
			return fmt.Errorf("saving snapshot fact sets: %w", err)
		}
	}
	onConflict := ` ON CONFLICT (snapshot_id) DO NOTHING`
	if replace {
		onConflict = ` ON CONFLICT (snapshot_id) DO UPDATE SET version = excluded.version, fact_set = excluded.fact_set`
	}
	for start := 0; start < len(sets); start += batch {
		part := sets[start:min(start+batch, len(sets))]
		args := make([]any, 0, 3*len(part))
		for _, f := range part {
			args = append(args, f.snapshot, summarizer.version, f.id)
		}
		q := `INSERT INTO snapshot_facts (snapshot_id, version, fact_set) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(part)), ", ") + onConflict
		if _, err := tx.ExecContext(ctx, s.q(q), args...); err != nil {
			return fmt.Errorf("saving snapshot facts: %w", err)
		}
	}
	return nil
}

// backfillSnapshotFacts summarizes every snapshot a store holds, inside a
// migration's transaction, a batch at a time so that memory stays flat in
// the number of snapshots: schema 5's, and the hook of any later migration
// that changes what a fact set holds (with the summarizer's new version),
// as it replaces the sets stored.
func backfillSnapshotFacts(ctx context.Context, s *Store, tx *sql.Tx) error {
	if summarizer.fn == nil {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM snapshots`)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	const batch = 200
	for start := 0; start < len(ids); start += batch {
		part := ids[start:min(start+batch, len(ids))]
		ph, args := factIn(part)
		docs, err := tx.QueryContext(ctx, s.q(`SELECT doc FROM snapshots WHERE id IN (`+ph+`)`), args...)
		if err != nil {
			return err
		}
		var snaps []*snapshot.Snapshot
		for docs.Next() {
			var doc string
			if err := docs.Scan(&doc); err != nil {
				docs.Close()
				return err
			}
			if snap, err := snapshot.Unmarshal([]byte(doc)); err == nil {
				snaps = append(snaps, snap) // a corrupt one is reported when it is read
			}
		}
		docs.Close()
		if err := docs.Err(); err != nil {
			return err
		}
		if err := s.writeFactSets(ctx, tx, summarize(snaps), true); err != nil {
			return err
		}
	}
	return nil
}

// factIn is "?, ?, …" for the ids and the ids as arguments.
func factIn(ids []string) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", "), args
}

// SnapshotFacts calls fn with the fact set of each snapshot in ids whose
// summary the registered summarizer's version made, once per distinct
// set with every snapshot that has it (doc is valid only during the
// call); the caller reads the others' own documents.
func (v *FleetView) SnapshotFacts(ctx context.Context, ids []string, fn func(doc []byte, snapshots []string) error) error {
	if ver, err := v.s.version(ctx, v.tx); err != nil {
		return err
	} else if ver < 5 || summarizer.fn == nil {
		return nil
	}
	bySet := map[string][]string{}
	const batch = 500
	for start := 0; start < len(ids); start += batch {
		ph, args := factIn(ids[start:min(start+batch, len(ids))])
		rows, err := v.tx.QueryContext(ctx, v.s.q(`SELECT snapshot_id, fact_set FROM snapshot_facts WHERE version = ? AND snapshot_id IN (`+ph+`)`), append([]any{summarizer.version}, args...)...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var snap, set string
			if err := rows.Scan(&snap, &set); err != nil {
				rows.Close()
				return err
			}
			bySet[set] = append(bySet[set], snap)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	sets := make([]string, 0, len(bySet))
	for id := range bySet {
		sets = append(sets, id)
	}
	sort.Strings(sets)
	for start := 0; start < len(sets); start += batch {
		ph, args := factIn(sets[start:min(start+batch, len(sets))])
		rows, err := v.tx.QueryContext(ctx, v.s.q(`SELECT id, doc FROM fact_sets WHERE id IN (`+ph+`)`), args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			var doc sql.RawBytes
			if err := rows.Scan(&id, &doc); err != nil {
				rows.Close()
				return err
			}
			if err := fn(doc, bySet[id]); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}
