package drain

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// BulkJournalVersion is the journal format's version: 2 seals the header (SHA256).
const BulkJournalVersion = 2

// BulkJournalHeader is a journal's first line.
type BulkJournalHeader struct {
	V       int    `json:"v"`
	Op      string `json:"op"`
	Command string `json:"command"`
	// Target is the database and table the run changes (context, user@host:port/db, table).
	Target string `json:"target"`
	// Schema is the run's --schema ("" for the connection's search_path), which a resume's
	// Try names when it was given another.
	Schema string `json:"schema,omitempty"`
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
	// SHA256 is the hex SHA-256 of the header's JSON without it: a resume acts on the header
	// (its target, archive, shards), so one edited after the run wrote it is refused, as
	// restore refuses an edited archive. Like the archive's, it is a seal, not a signature.
	SHA256 string `json:"sha256,omitempty"`
}

// seal is the header's SHA256: of its JSON with SHA256 empty.
func (h BulkJournalHeader) seal() (string, error) {
	h.SHA256 = ""
	b, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
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
	if h.SHA256, err = h.seal(); err != nil {
		f.Close()
		return nil, err
	}
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

// OpenJournal opens the journal read back to append the resumed run's batches, first cutting
// off a last line a kill cut short (Truncated): the resume holds the journal's lock, so no
// other write is in flight, and the line, glued to the next one, would make the journal
// unreadable.
func (r *BulkResume) OpenJournal() (*BulkJournal, error) {
	f, err := os.OpenFile(r.Path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if r.Truncated {
		if err := f.Truncate(r.whole); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &BulkJournal{Path: r.Path, f: f}, nil
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
	// Truncated says the journal's last line was cut short (a kill during its write): it was
	// ignored (its batch's shards are not finished, so the resume works on them again, which
	// finds nothing left to do in those it had done).
	Truncated bool
	// whole is the journal's length up to its last whole line.
	whole int64
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
// shards are some 30 MB). A longer line is refused before it is read whole (readLine).
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
	br := bufio.NewReaderSize(f, 1<<16)
	r := &BulkResume{Path: path, Finished: map[query.ShardRef]bool{}}
	for n := 1; ; n++ {
		raw, err := readLine(br, nil, maxJournalLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if len(raw) == 0 {
			break
		}
		if raw[len(raw)-1] != '\n' && n > 1 { // a batch line a kill cut short, as archives' last lines
			r.Truncated = true
			break
		}
		r.whole += int64(len(raw))
		if n == 1 {
			if err := r.readHeader(raw, path, id); err != nil {
				return nil, err
			}
			continue
		}
		var b journalBatch
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("%s:%d: not a journal line: %w", path, n, err)
		}
		for _, s := range b.Finished {
			r.Finished[query.ShardRef{Scope: int(s[0]), ID: s[1]}] = true
		}
		r.Operations = max(r.Operations, b.Operations)
	}
	if r.Op == "" {
		return nil, fmt.Errorf("%s: empty journal", path)
	}
	return r, nil
}

// readHeader reads the journal's first line and checks its seal.
func (r *BulkResume) readHeader(raw []byte, path, id string) error {
	if err := json.Unmarshal(raw, &r.BulkJournalHeader); err != nil || r.Op != id || r.V < 1 {
		return fmt.Errorf("%s:1: not the journal of operation %s", path, id)
	}
	if r.V != BulkJournalVersion {
		return fmt.Errorf("%s:1: a journal of version %d, written by another outboxctl (this one writes %d): run the same command again instead of --resume", path, r.V, BulkJournalVersion)
	}
	want, err := r.seal()
	if err != nil {
		return err
	}
	if r.SHA256 != want {
		return fmt.Errorf("%s:1: the journal's header was edited after outboxctl wrote it (its sha256 does not match), so nothing was changed: run the same command again instead of --resume", path)
	}
	return nil
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
