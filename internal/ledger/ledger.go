// Package ledger remembers which shards outboxctl made due, and when: a reschedule or a
// kill switch's removal hands a shard to Sentry's own workers for a fresh attempt. doctor
// reads it back to tell a receiver outage from a poison message: a head that fails again
// after a fresh attempt while the same category delivers elsewhere is poison; one that has
// not been attempted since decides nothing yet. Reads of the database never write, so the
// record lives on the operator's machine, in the state directory beside the archives
// ($XDG_STATE_HOME/outboxctl/made-due.jsonl), one JSON line per shard.
//
// A record is evidence only for the database, schema, table and cell it names, and only
// while the shard's head is the row it recorded: a record from another database (or a
// head that changed) proves nothing, so doctor falls back to the step that decides.
package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// FileName is the ledger's file in the state directory.
const FileName = "made-due.jsonl"

// Keep is how long a record is evidence: past it, a later doctor asks for a fresh attempt
// again (a day-old attempt says little about a receiver now). Appends drop older records.
const Keep = 7 * 24 * time.Hour

// Where names the queue a record is about: the database (host:port/name, never a
// password), the schema, the outbox table and, in the control silo, the cell.
type Where struct {
	Database string `json:"database"`
	Schema   string `json:"schema"`
	Table    string `json:"table"`
	Cell     string `json:"cell,omitempty"`
}

// Record is one shard made due.
type Record struct {
	Where
	At        time.Time `json:"at"`
	Operation string    `json:"operation,omitempty"`
	// Via is the command that made it due: "reschedule" or "killswitch remove"; "skip" for a
	// coalesce group outboxctl removed (its newest row gone is no delivery).
	Via   string `json:"via"`
	Scope int    `json:"shard_scope"`
	Shard int64  `json:"shard_identifier"`
	// HeadID and HeadCategory are the shard's head row then (0: the shard was empty).
	HeadID       int64 `json:"head_id"`
	HeadCategory int   `json:"head_category"`
	// GroupNewestID is the newest row of the head's coalesce group then: when it is gone
	// later, Sentry delivered the group (compact and kill-switch trimming keep it).
	GroupNewestID int64 `json:"group_newest_id"`
}

// Via values.
const (
	ViaReschedule = "reschedule"
	ViaKillswitch = "killswitch remove"
	ViaSkip       = "skip"
)

// Path is the ledger's path: dir, else the state directory.
func Path(dir string) (string, error) {
	if dir != "" {
		return filepath.Join(dir, FileName), nil
	}
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the state directory: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "outboxctl", FileName), nil
}

// Append adds records to the ledger at path in one write (O_APPEND: concurrent writers
// never interleave within it). A ledger grown past maxBytes is first rewritten without the
// records older than Keep.
func Append(path string, recs []Record, now time.Time) error {
	if len(recs) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if st, err := os.Stat(path); err == nil && st.Size() > maxBytes {
		if err := prune(path, now); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range recs {
		r.At = r.At.UTC()
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		_ = f.Close()
		return fmt.Errorf("ledger: %w", err)
	}
	return f.Close()
}

// maxBytes is the size past which an append prunes (about 60,000 records).
const maxBytes = 8 << 20

func prune(path string, now time.Time) error {
	all, err := read(path)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range all {
		if now.Sub(r.At) <= Keep {
			_ = enc.Encode(r)
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return os.Rename(tmp, path)
}

// Since is the records of w made at or after since, oldest first: the fresh attempts and
// the skips the ledger knows of. A missing ledger is no record; a line that does not parse
// (a write cut by a crash) is passed over.
func Since(path string, w Where, since time.Time) ([]Record, error) {
	all, err := read(path)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, r := range all {
		if r.Where.Database == w.Database && r.Schema == w.Schema && r.Table == w.Table && !r.At.Before(since) {
			out = append(out, r)
		}
	}
	return out, nil
}

func read(path string) ([]Record, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Via != "" {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}
