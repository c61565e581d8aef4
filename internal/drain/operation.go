package drain

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/internal/query"
)

// The archive format, version 3: one JSON object a line, every line naming its operation (one
// drain, compact or skip run) with the command, reason, OS user and start time. An operation
// writes its rows in batches, each in two phases:
//
//	{"v":3,"kind":"row",...}     staged and synced BEFORE the DELETE (one line a row)
//	{"v":3,"kind":"commit",...}  written after the transaction committed: the ids it deleted
//	{"v":3,"kind":"abort",...}   written when the transaction certainly rolled back
//
// restore uses only committed batches (a COMMIT that got no answer is settled on a fresh
// connection, which writes its marker from what it found). A batch with neither marker (a
// crash, or a COMMIT whose outcome the settle could not tell) is reported, never restored by
// default: its rows should still be in the table.
//
// Every line names the operation's shard, and every row must be in it. Every commit and abort
// marker carries "sha256": the SHA-256 of every line of the operation before it (its header,
// rows and earlier markers, each as written, with its newline), so restore detects a line of
// the operation edited, removed, added or moved. In version 3 both are required on every line:
// a version 3 line without them was edited. Version 2 had them optional (the release that
// added them wrote them within 2, and the one before it wrote 2 without them), so removing
// them from a version 2 operation made it look as old as an unsealed one: such an operation
// is read as FormatUnsealed and restored only when asked (RestoreSelection.Unverified). An
// outboxctl that reads only version 2 refuses a version 3 line as an unknown version.
const FormatVersion = 3

// FormatUnsealed is the version of operations whose lines may lack the shard and the checksum:
// sealed when they carry them, unverifiable when not.
const FormatUnsealed = 2

// ChecksumSHA256 is OperationMeta.Checksum for an operation whose markers carry the SHA-256
// of the operation's lines before them.
const ChecksumSHA256 = "sha256"

// Line kinds.
const (
	KindOperation = "operation"
	KindRow       = "row"
	KindCommit    = "commit"
	KindAbort     = "abort"
	// KindTorn follows a line a kill cut short, when a later run appends to the file
	// (sealTornTail): restore skips the cut line and says so instead of refusing the file.
	KindTorn = "torn"
)

// OperationMeta describes one archiving run. Command, User, Table and PayloadType are
// required; OpenOperation fills ID and Started when empty.
type OperationMeta struct {
	ID      string    `json:"op"`
	Command string    `json:"command"`
	Reason  string    `json:"reason,omitempty"`
	User    string    `json:"user"`
	Started time.Time `json:"started_at"`
	Schema  string    `json:"schema,omitempty"`
	Table   string    `json:"table"`
	// CellColumn is the control outbox's cell column ("" for a cell outbox).
	CellColumn string `json:"cell_column,omitempty"`
	// PayloadType is the payload column's type the rows came from: "jsonb" or "text" (Sentry's).
	PayloadType string `json:"payload_type"`
	// Shard is the shard every row of the operation is in (nil in archives written before it
	// was recorded). OpenOperation requires it.
	Shard *ArchiveShard `json:"shard,omitempty"`
	// Checksum says how the markers seal the operation: ChecksumSHA256, or "" before there
	// was a checksum. OpenOperation sets it.
	Checksum string `json:"checksum,omitempty"`
}

// ArchiveShard is the shard an operation archived: every drain, compact and skip works on one.
type ArchiveShard struct {
	Scope int   `json:"scope"`
	ID    int64 `json:"id"`
	// Cell is the control outbox's cell (its shards are per cell); nil for a cell outbox.
	Cell *string `json:"cell,omitempty"`
}

// Holds reports whether r is a row of the shard.
func (s ArchiveShard) Holds(r Row) bool {
	return s.same(ArchiveShard{Scope: r.ShardScope, ID: r.ShardID, Cell: r.Cell})
}

func (s ArchiveShard) same(o ArchiveShard) bool {
	return s.Scope == o.Scope && s.ID == o.ID && (s.Cell == nil) == (o.Cell == nil) && (s.Cell == nil || *s.Cell == *o.Cell)
}

func (s ArchiveShard) String() string {
	if s.Cell == nil {
		return fmt.Sprintf("(scope %d, id %d)", s.Scope, s.ID)
	}
	return fmt.Sprintf("(scope %d, id %d, cell %q)", s.Scope, s.ID, *s.Cell)
}

// same reports whether two lines' operation fields are the same operation's.
func (m OperationMeta) same(o OperationMeta) bool {
	if (m.Shard == nil) != (o.Shard == nil) || m.Shard != nil && !m.Shard.same(*o.Shard) {
		return false
	}
	return m.ID == o.ID && m.Command == o.Command && m.Reason == o.Reason && m.User == o.User && m.Started.Equal(o.Started) &&
		m.Schema == o.Schema && m.Table == o.Table && m.CellColumn == o.CellColumn && m.PayloadType == o.PayloadType && m.Checksum == o.Checksum
}

// Row is an outbox row exactly as it was before the operation touched it.
type Row struct {
	ID         int64   `json:"id"`
	ShardScope int     `json:"shard_scope"`
	ShardID    int64   `json:"shard_identifier"`
	Category   int     `json:"category"`
	ObjectID   int64   `json:"object_identifier"`
	Cell       *string `json:"cell"`
	// Payload is the exact payload::text; nil is SQL NULL (the text "null" is a JSON string here).
	Payload       *string   `json:"payload_text"`
	ScheduledFrom time.Time `json:"scheduled_from"`
	ScheduledFor  time.Time `json:"scheduled_for"`
	DateAdded     time.Time `json:"date_added"`
	// Webhook is a webhook payload's columns (webhook.go), nil for an outbox row.
	Webhook *WebhookPayload `json:"webhook,omitempty"`
}

// Schedule is a row's schedule before a drain claimed its shard.
type Schedule struct{ From, For time.Time }

// Batch is a set of staged rows, identified by its sequence number within the operation.
type Batch struct {
	Seq int
	IDs []int64
}

// Operation appends one operation's lines to an archive file.
type Operation struct {
	Meta OperationMeta
	Path string
	mu   sync.Mutex
	file *ArchiveHandle
	seq  int
	// sum hashes every line written, for the markers' checksum.
	sum hash.Hash
	// own says the operation opened its file (Close closes it); a bulk repair's operations
	// share one ArchiveHandle, which its owner syncs and closes.
	own bool
	// bytes counts what the operation wrote to the file, as stored (compressed when the file
	// is): its summary's archive_bytes, beside the plan's estimate.
	bytes int64
}

// Bytes is what the operation has written to its archive file, as stored on disk.
func (op *Operation) Bytes() int64 {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.bytes
}

// ArchiveHandle is an archive file open for appending, shared by the operations of a bulk
// repair (one per shard): their writes wait for Sync, so one fsync covers every line a
// batch wrote, however many shards it held (one open file and one fsync a batch, not one of
// each per shard: 1,000 shards cost 2,000 fsyncs before).
type ArchiveHandle struct {
	Path string
	mu   sync.Mutex
	f    *os.File
	// deferSync leaves the sync of each write to Sync; dirty says a write waits for it.
	deferSync, dirty bool
	// compressed writes each append as one zstd frame (Compressed: the name ends in .zst).
	compressed bool
	// syncs counts the fsyncs done, for the test that every DELETE follows one.
	syncs int
}

// OpenArchiveHandle opens (creating) path for appending, for operations whose writes wait
// for the handle's Sync (OpenOn).
func OpenArchiveHandle(path string) (*ArchiveHandle, error) { return openHandle(path, true) }

func openHandle(path string, deferSync bool) (*ArchiveHandle, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the archive directory: %w", err)
	}
	// Read too, to see whether a kill cut the last line short; a file this user may only
	// write to is appended to as before, unsealed.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o600)
	seal := err == nil
	if errors.Is(err, os.ErrPermission) {
		f, err = os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the archive: %w", err)
	}
	// Held while the file is open: SettleArchive leaves a file some run writes to alone.
	if err := lockShared(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the archive %s: %w", path, err)
	}
	compressed := Compressed(path)
	if seal {
		sealTail := sealTornTail
		if compressed {
			sealTail = sealCompressedTail
		}
		if err := sealTail(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("opening the archive %s: %w", path, err)
		}
	}
	return &ArchiveHandle{Path: path, f: f, deferSync: deferSync, compressed: compressed}, nil
}

// tornLine is the line sealTornTail writes after a line a kill cut short.
type tornLine struct {
	V    int       `json:"v"`
	Kind string    `json:"kind"`
	At   time.Time `json:"at"`
}

// sealTornTail ends the file's last line when a kill cut it short (its bytes are in the
// file, its newline is not: --resume and every later run append to the same file): a
// newline, then a torn line, so that what is appended next starts a line of its own (glued to
// the cut line, the next operation's header was lost with it) and restore knows the line
// before the torn line was cut short: it skips it and says so, where a bad line in the middle
// of a file makes it refuse the file. Nothing is truncated: another process's write may be in
// flight, and O_APPEND puts this one after it; then the torn line follows a whole line, and
// restore ignores it (as it ignores the empty line).
func sealTornTail(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := []byte{0}
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	b, err := json.Marshal(tornLine{V: FormatVersion, Kind: KindTorn, At: time.Now().UTC()})
	if err != nil {
		return err
	}
	if _, err := f.Write(append(append([]byte{'\n'}, b...), '\n')); err != nil {
		return err
	}
	return f.Sync()
}

// append writes buf in one write (written: it is in the file), and syncs it unless the
// handle defers its syncs.
func (h *ArchiveHandle) append(buf []byte) (n int64, written bool, err error) {
	if h.compressed {
		if buf, err = compressFrame(buf); err != nil {
			return 0, false, err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := h.f.Write(buf); err != nil {
		return 0, false, fmt.Errorf("writing the archive %s: %w", h.Path, err)
	}
	n = int64(len(buf))
	if h.deferSync {
		h.dirty = true
		return n, true, nil
	}
	if err := h.f.Sync(); err != nil {
		return n, true, fmt.Errorf("syncing the archive %s: %w", h.Path, err)
	}
	h.syncs++
	return n, true, nil
}

// Sync syncs what was written since the last sync (nothing to do when nothing was).
func (h *ArchiveHandle) Sync() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.dirty {
		return nil
	}
	if err := h.f.Sync(); err != nil {
		return fmt.Errorf("syncing the archive %s: %w", h.Path, err)
	}
	h.dirty = false
	h.syncs++
	return nil
}

// Close closes the file; call Sync first when writes wait for it.
func (h *ArchiveHandle) Close() error { return h.f.Close() }

// Sync syncs what the operation's file holds unsynced (a shared handle: every operation's).
func (op *Operation) Sync() error { return op.file.Sync() }

type rowLine struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	OperationMeta
	Batch    int       `json:"batch"`
	StagedAt time.Time `json:"staged_at"`
	Row
	// PayloadJSON is a readable copy of a payload that is JSON; restore never uses it.
	PayloadJSON json.RawMessage `json:"payload,omitempty"`
}

type markLine struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	OperationMeta
	Batch int       `json:"batch,omitempty"`
	At    time.Time `json:"at"`
	Rows  int       `json:"rows"`
	IDs   []int64   `json:"ids,omitempty"`
	Error string    `json:"error,omitempty"`
	// SHA256 is the hex SHA-256 of the operation's lines before this marker.
	SHA256 string `json:"sha256,omitempty"`
}

// NewOperationID names an operation: UTC start time, command, random suffix.
func NewOperationID(command string, now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + command + "-" + hex.EncodeToString(b[:])
}

// OperationArchivePath is an operation's own archive file under the user's state directory
// ($XDG_STATE_HOME/outboxctl, else ~/.local/state/outboxctl), compressed (archive-ID.jsonl.zst).
func OperationArchivePath(opID string) (string, error) {
	day, err := DefaultArchivePath(time.Now())
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(day), "archive-"+opID+".jsonl"+CompressedExt), nil
}

// OpenOperation opens (creating) path for appending and writes the operation's header line,
// synced. A file may hold several operations; restore tells them apart by ID.
func OpenOperation(path string, meta OperationMeta) (*Operation, error) {
	return openOperation(path, meta)
}

// openOperation is OpenOperation: the operation on a file of its own, every write synced.
func openOperation(path string, meta OperationMeta) (*Operation, error) {
	if err := checkMeta(&meta); err != nil {
		return nil, err
	}
	h, err := openHandle(path, false)
	if err != nil {
		return nil, err
	}
	op, err := h.start(meta, true)
	if err != nil {
		h.Close()
		return nil, err
	}
	return op, nil
}

// OpenOn starts the operation meta describes on h (its ID and start filled when empty): the
// header and every later line wait for h's Sync, and the operation's Close leaves h open.
func (h *ArchiveHandle) OpenOn(meta OperationMeta) (*Operation, error) {
	if err := checkMeta(&meta); err != nil {
		return nil, err
	}
	return h.start(meta, false)
}

// start writes the operation's header on h.
func (h *ArchiveHandle) start(meta OperationMeta, own bool) (*Operation, error) {
	op := &Operation{Meta: meta, Path: h.Path, file: h, sum: sha256.New(), own: own}
	if err := op.write(markLine{V: FormatVersion, Kind: KindOperation, OperationMeta: meta, At: meta.Started}); err != nil {
		return nil, err
	}
	return op, nil
}

// checkMeta checks an operation's required fields and fills its checksum, start and ID.
func checkMeta(meta *OperationMeta) error {
	if meta.Command == "" || meta.User == "" || meta.Table == "" || meta.PayloadType == "" || meta.Shard == nil {
		return fmt.Errorf("archive: an operation needs a command, a user, a table, its payload column's type and its shard, got %q %q %q %q %v",
			meta.Command, meta.User, meta.Table, meta.PayloadType, meta.Shard)
	}
	meta.Checksum = ChecksumSHA256
	if meta.Started.IsZero() {
		meta.Started = time.Now().UTC()
	}
	if meta.ID == "" {
		meta.ID = NewOperationID(meta.Command, meta.Started)
	}
	if !validOpID(meta.ID) {
		return fmt.Errorf("archive: invalid operation id %q", meta.ID)
	}
	return nil
}

// write appends lines in one write and syncs them.
func (op *Operation) write(lines ...any) error {
	var buf []byte
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return fmt.Errorf("writing the archive: %w", err)
		}
		buf = append(append(buf, b...), '\n')
	}
	n, written, err := op.file.append(buf)
	op.bytes += n
	if written {
		// Hashed once written, synced or not: a failed sync leaves the lines in the file, and
		// the next marker's checksum must cover them as restore reads them.
		op.sum.Write(buf)
	}
	return err
}

// Stage writes rows as a new batch and syncs them. Call it BEFORE the DELETE, in the
// transaction that deletes them; on any error, do not delete. A payload that could not be
// restored byte for byte (invalid UTF-8) is refused.
func (op *Operation) Stage(rows []Row) (Batch, error) {
	op.mu.Lock()
	defer op.mu.Unlock()
	b := Batch{Seq: op.seq + 1, IDs: make([]int64, 0, len(rows))}
	now := time.Now().UTC()
	lines := make([]any, 0, len(rows))
	for _, r := range rows {
		if r.Payload != nil && !utf8.ValidString(*r.Payload) {
			return Batch{}, fmt.Errorf("archive: row %d: payload is not valid UTF-8 and could not be restored byte for byte; refusing to delete it", r.ID)
		}
		if !op.Meta.Shard.Holds(r) {
			return Batch{}, fmt.Errorf("archive: row %d is not in the operation's shard %s; refusing to delete it", r.ID, op.Meta.Shard)
		}
		l := rowLine{V: FormatVersion, Kind: KindRow, OperationMeta: op.Meta, Batch: b.Seq, StagedAt: now, Row: r}
		if r.Payload != nil && json.Valid([]byte(*r.Payload)) {
			l.PayloadJSON = json.RawMessage(*r.Payload)
		}
		lines = append(lines, l)
		b.IDs = append(b.IDs, r.ID)
	}
	if err := op.write(lines...); err != nil {
		return Batch{}, err
	}
	op.seq = b.Seq
	return b, nil
}

// Commit records, after the transaction committed, that every staged row of b was deleted.
func (op *Operation) Commit(b Batch) error { return op.CommitDeleted(b, b.IDs) }

// CommitDeleted records, after the transaction committed, which staged rows of b it deleted
// (a DELETE … RETURNING id may find fewer rows than were staged: another session deleted
// some). restore puts back only these.
func (op *Operation) CommitDeleted(b Batch, deleted []int64) error {
	op.mu.Lock()
	defer op.mu.Unlock()
	if deleted == nil {
		deleted = []int64{}
	}
	return op.write(markLine{V: FormatVersion, Kind: KindCommit, OperationMeta: op.Meta, Batch: b.Seq, At: time.Now().UTC(), Rows: len(deleted), IDs: deleted, SHA256: op.checksum()})
}

// Abort records that b's transaction certainly rolled back (its rows were not deleted). When
// the outcome is unknown (a failed COMMIT), write nothing: restore reports the batch.
func (op *Operation) Abort(b Batch, cause error) error {
	op.mu.Lock()
	defer op.mu.Unlock()
	msg := "rolled back"
	if cause != nil {
		msg = cause.Error()
	}
	return op.write(markLine{V: FormatVersion, Kind: KindAbort, OperationMeta: op.Meta, Batch: b.Seq, At: time.Now().UTC(), Rows: len(b.IDs), Error: msg, SHA256: op.checksum()})
}

// checksum is the hex SHA-256 of the operation's lines written so far.
func (op *Operation) checksum() string { return hex.EncodeToString(op.sum.Sum(nil)) }

// Close closes the file (every line is already synced) when the operation opened it; a
// shared handle stays open for its owner.
func (op *Operation) Close() error {
	if !op.own {
		return nil
	}
	return op.file.Close()
}

// archiveColumns are the columns archiveRow reads (what query.DrainArchiveRows and
// query.Superseded return), in their order.
var archiveColumns = []string{"id", "shard_scope", "shard_identifier", "category", "object_identifier", "cell",
	"payload", "scheduled_from", "scheduled_for", "date_added"}

// archiveRow is a row query.DrainArchiveRows, query.Superseded and query.SkipGroupRows
// read, by name: a column missing, or a NULL or a value of another type where the row needs
// one (its key and schedule), is an error. cell and payload are NULL when there is none.
type archiveRow struct {
	ID            int64     `db:"id"`
	ShardScope    int       `db:"shard_scope"`
	ShardID       int64     `db:"shard_identifier"`
	Category      int       `db:"category"`
	ObjectID      *int64    `db:"object_identifier"`
	Cell          *string   `db:"cell"`
	Payload       *string   `db:"payload"`
	ScheduledFrom time.Time `db:"scheduled_from"`
	ScheduledFor  time.Time `db:"scheduled_for"`
	DateAdded     time.Time `db:"date_added"`
}

// RowsFromResult turns rows read by query.DrainArchiveRows (or query.Superseded, or
// query.SkipGroupRows) into archive rows. original, when it has an id, gives that row's
// schedule before the drain claimed the shard (the claim rewrites every row's schedule).
func RowsFromResult(res *query.Result, original *Schedules) ([]Row, error) {
	read, err := query.Rows[archiveRow](res)
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	rows := make([]Row, 0, len(read))
	for _, v := range read {
		r := Row{ID: v.ID, ShardScope: v.ShardScope, ShardID: v.ShardID, Category: v.Category,
			ObjectID: query.Deref(v.ObjectID), Cell: v.Cell, Payload: v.Payload,
			ScheduledFrom: v.ScheduledFrom, ScheduledFor: v.ScheduledFor, DateAdded: v.DateAdded}
		if s, found := original.Lookup(r.ID); found {
			r.ScheduledFrom, r.ScheduledFor = s.From, s.For
		}
		rows = append(rows, r)
	}
	return rows, nil
}
