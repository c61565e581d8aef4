package drain

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// A bulk run's journal: what `--resume OPERATION` continues from. One JSON object a line, in
// the user's state directory beside the archives (BulkJournalPath): a header naming the run
// (its operation id, command, target, selector flags as typed and the instants they resolved
// to, its archive) and every shard it selected, then one line per batch naming the shards it
// finished (done, or empty) and how many archive operations the run has written. The rest of
// a run is its selected shards not finished: those not reached, and those being drained,
// failed or in doubt, which a resume tries again.

// BulkJournalVersion is the journal format's version.
const BulkJournalVersion = 1

// BulkJournalHeader is a journal's first line.
type BulkJournalHeader struct {
	V       int    `json:"v"`
	Op      string `json:"op"`
	Command string `json:"command"`
	// Target is the database and table the run changes (context, user@host:port/db, table).
	Target string `json:"target"`
	// Flags are the selector flags as typed (their JSON), compared with a resume's.
	Flags json.RawMessage `json:"flags"`
	// AddedAfter and AddedBefore are the instants --added-after/--added-before resolved to
	// ("2h" is two hours before the run, not before its resume).
	AddedAfter  *time.Time `json:"added_after,omitempty"`
	AddedBefore *time.Time `json:"added_before,omitempty"`
	// Archive is a skip's or compact's archive file, where a resume goes on writing.
	Archive string `json:"archive,omitempty"`
	// KeepBackoff is a skip's or compact's --keep-backoff, which its resume keeps.
	KeepBackoff bool `json:"keep_backoff,omitempty"`
	// GroupHeads is a reschedule's --group-heads, which its resume keeps.
	GroupHeads bool       `json:"group_heads,omitempty"`
	Started    time.Time  `json:"started_at"`
	Shards     [][2]int64 `json:"shards"`
}

type journalBatch struct {
	Finished   [][2]int64 `json:"finished"`
	Operations int        `json:"operations"`
}

// BulkJournal appends a run's batches to its journal, each synced.
type BulkJournal struct {
	Path string
	f    *os.File
}

// BulkJournalPath is the journal of bulk operation id under the user's state directory; an
// id that is not an operation id (a path, a quote) is refused.
func BulkJournalPath(id string) (string, error) {
	if !validOpID(id) {
		return "", fmt.Errorf("%q is not an operation id (such as 20261201T101500Z-skip-3fa9c1)", id)
	}
	day, err := DefaultArchivePath(time.Now())
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(day), "bulk-"+id+".jsonl"), nil
}

// JournalMaxAge is how long a bulk run's journal is kept after its last batch: a resume
// continues a run of the same incident, not one a month old (its selector's time window and
// the shards it chose mean nothing by then). Archives are never removed: they are the rows.
const JournalMaxAge = 30 * 24 * time.Hour

// CreateBulkJournal writes a new run's journal header, synced, after removing the journals
// of runs whose last batch is older than JournalMaxAge (PruneBulkJournals).
func CreateBulkJournal(h BulkJournalHeader) (*BulkJournal, error) {
	path, err := BulkJournalPath(h.Op)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	PruneBulkJournals(filepath.Dir(path), time.Now().Add(-JournalMaxAge))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if err := tryLock(f); err != nil { // held until Close: a resume of the run meanwhile is refused
		f.Close()
		return nil, err
	}
	h.V = BulkJournalVersion
	j := &BulkJournal{Path: path, f: f}
	if err := j.write(h); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// PruneBulkJournals removes the bulk journals in dir last written before cutoff, except one
// another process holds (a run or a resume still going: its lock is taken first, and the
// file removed only while it is held). It returns the journals removed; what cannot be read
// or removed is left, quietly (pruning never costs a run anything).
func PruneBulkJournals(dir string, cutoff time.Time) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "bulk-*.jsonl"))
	var removed []string
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || !st.ModTime().Before(cutoff) {
			continue
		}
		f, err := os.OpenFile(p, os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		if tryLock(f) == nil && os.Remove(p) == nil {
			removed = append(removed, p)
		}
		f.Close()
	}
	return removed
}

// OpenBulkJournal opens an existing journal to append a resumed run's batches.
func OpenBulkJournal(path string) (*BulkJournal, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	return &BulkJournal{Path: path, f: f}, nil
}

func (j *BulkJournal) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return j.f.Sync()
}

// Record appends a batch: the shards of lines it finished (done or empty), and the number of
// archive operations the run has written so far.
func (j *BulkJournal) Record(lines []BulkShard, operations int) error {
	b := journalBatch{Finished: [][2]int64{}, Operations: operations}
	for _, l := range lines {
		if l.Outcome == BulkDone || l.Outcome == BulkEmpty {
			b.Finished = append(b.Finished, [2]int64{int64(l.Scope), l.ID})
		}
	}
	return j.write(b)
}

// Close closes the journal.
func (j *BulkJournal) Close() error { return j.f.Close() }

// ErrJournalLocked is a journal another process holds: the run itself, still going, or a
// resume of it.
var ErrJournalLocked = errors.New("locked by another process")

// BulkResume is a journal read back: the run, and what it finished.
type BulkResume struct {
	BulkJournalHeader
	Path     string
	Finished map[query.ShardRef]bool
	// Operations is the number of archive operations the batches the journal recorded wrote:
	// a batch killed before its line may have staged more in the archive (BulkArchive.Resumed
	// numbers on from the archive's own).
	Operations int
	// lock is the journal open with its flock, held from the read until Unlock.
	lock *os.File
}

// Unlock releases the journal's lock (nil: nothing to release).
func (r *BulkResume) Unlock() {
	if r != nil && r.lock != nil {
		r.lock.Close()
		r.lock = nil
	}
}

// maxJournalLine caps a journal line: its header lists every selected shard (a million
// shards are some 30 MB).
const maxJournalLine = 256 << 20

// ReadBulkJournal reads the journal of operation id and locks it (Unlock releases it): two
// resumes of one run, or a resume while the run still goes, would number the same archive
// operations, so a journal another process holds is ErrJournalLocked. A journal that does
// not exist is os.ErrNotExist; one that is not a journal, an error naming its line.
func ReadBulkJournal(id string) (*BulkResume, error) {
	path, err := BulkJournalPath(id)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := tryLock(f); err != nil {
		f.Close()
		return nil, err
	}
	r, err := readBulkJournal(f, path, id)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.lock = f
	return r, nil
}

func readBulkJournal(f *os.File, path, id string) (*BulkResume, error) {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), maxJournalLine)
	r := &BulkResume{Path: path, Finished: map[query.ShardRef]bool{}}
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			if err := json.Unmarshal(sc.Bytes(), &r.BulkJournalHeader); err != nil || r.V != BulkJournalVersion || r.Op != id {
				return nil, fmt.Errorf("%s:1: not the journal of operation %s (version %d)", path, id, r.V)
			}
			continue
		}
		var b journalBatch
		if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
			return nil, fmt.Errorf("%s:%d: not a journal line: %w", path, n, err)
		}
		for _, s := range b.Finished {
			r.Finished[query.ShardRef{Scope: int(s[0]), ID: s[1]}] = true
		}
		r.Operations = max(r.Operations, b.Operations)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Op == "" {
		return nil, fmt.Errorf("%s: empty journal", path)
	}
	return r, nil
}

// Remaining are the run's selected shards it did not finish, in the order selected.
func (r *BulkResume) Remaining() []query.ShardRef {
	out := []query.ShardRef{}
	for _, s := range r.Shards {
		if ref := (query.ShardRef{Scope: int(s[0]), ID: s[1]}); !r.Finished[ref] {
			out = append(out, ref)
		}
	}
	return out
}
