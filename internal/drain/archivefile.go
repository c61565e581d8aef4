package drain

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/outboxctl/outboxctl/internal/bytesize"
)

// BatchState says whether a batch's deletion committed.
type BatchState string

// The states of a batch.
const (
	// BatchCommitted: the deletion committed; restore puts the committed ids back.
	BatchCommitted BatchState = "committed"
	// BatchAborted: the transaction rolled back; the rows were never deleted.
	BatchAborted BatchState = "rolled back"
	// BatchStaged: staged, with no marker (a crash, or a COMMIT of unknown outcome); the
	// rows should still be in the table. restore skips them unless asked.
	BatchStaged BatchState = "staged, not committed"
	// BatchLegacy: a line of the previous release's format, which has no commit marker.
	BatchLegacy BatchState = "old format, commit unknown"
)

// ArchivedBatch is one batch of an operation as read back.
type ArchivedBatch struct {
	Seq   int
	State BatchState
	Rows  []Row
	// Deleted holds the ids a commit marker names (committed batches only).
	Deleted map[int64]bool
	Error   string
}

// Restorable returns the rows whose deletion the batch's marker records.
func (b *ArchivedBatch) Restorable() []Row {
	switch b.State {
	case BatchCommitted:
		out := make([]Row, 0, len(b.Rows))
		for _, r := range b.Rows {
			if b.Deleted[r.ID] {
				out = append(out, r)
			}
		}
		return out
	case BatchLegacy:
		return b.Rows
	}
	return nil
}

// ArchivedOperation is one operation of an archive file.
type ArchivedOperation struct {
	OperationMeta
	// Legacy is true for lines of the previous release's format (see LegacyLimits).
	Legacy bool
	// Version is the format version of the operation's first line (0 for Legacy).
	Version int
	Batches []*ArchivedBatch
	// Problem is the first sign that the operation's lines are not as outboxctl wrote them (a
	// row outside its shard, another operation's fields, a checksum that does not match),
	// with its line number: restore refuses the operation. nil when none was found.
	Problem error
	// shard is the shard its rows must be in: Shard, or for an operation written before
	// Shard was recorded, its first row's.
	shard *ArchiveShard
	// sum hashes its lines as read, for the markers' checksums.
	sum hash.Hash
}

// Verified reports whether the operation's markers carry checksums, so that an edit would
// have been detected (Problem): not for archives written before them, nor for a version 2
// operation whose checksum fields were removed (the two look the same).
func (o *ArchivedOperation) Verified() bool { return o.Checksum == ChecksumSHA256 && !o.Legacy }

// UnverifiedNote says what an operation that is not Verified cannot promise.
const UnverifiedNote = "carries no checksum (written before archives had one, or with its checksum fields removed): its rows could not be checked for edits (a row moved to another shard, a payload changed)"

// LegacyLimits states what an old-format archive line cannot promise.
const LegacyLimits = "old-format archive (before per-operation archives): it has no commit marker (rows whose DELETE failed are listed too; ids that exist are skipped), its payloads may not come back byte for byte (a non-JSON text payload comes back as a JSON string, the text null as SQL NULL, JSON re-spaced), and rows of a discard drain carry the schedule of the claim, not the original one"

// Skip reports whether the operation is a skip (poison messages: restored only when named).
func (o *ArchivedOperation) Skip() bool {
	return o.Command == "skip" || o.Command == CommandDrainDiscard
}

// CommandDrainDiscard is the archive command of a drain through --handler discard: like a
// skip, it removed messages nobody delivered, so restore --all leaves it out.
const CommandDrainDiscard = "drain-discard"

// ArchiveFile is an archive read back, its operations in the order they first appear.
type ArchiveFile struct {
	Path       string
	Operations []*ArchivedOperation
	// Truncated is set when the last line was cut short (a write a kill interrupted) and
	// ignored.
	Truncated bool
	// Torn are the lines a kill cut short that a later run appended after (it sealed each
	// with a torn line): skipped.
	Torn []int
}

// opIDPattern is compiled on first use: its {0,99} unrolls into a large program (0.4–2.5 ms
// and 1,300 allocations), which every command paid at start-up when it was a package variable.
var opIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$`) })

func validOpID(s string) bool { return opIDPattern().MatchString(s) }

// lineHead is read first, to tell the formats apart before reading a line whole.
type lineHead struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
}

// fileLine is a line of the current format. Its readable payload copy ("payload") has no
// field, so decoding skips it instead of copying it.
type fileLine struct {
	lineHead
	OperationMeta
	Batch int `json:"batch"`
	Row
	IDs    []int64 `json:"ids"`
	Error  string  `json:"error"`
	SHA256 string  `json:"sha256"`
}

// legacyLine is a line of the previous release's format.
type legacyLine struct {
	OperationMeta
	Row
	ArchivedAt time.Time       `json:"archived_at"`
	OldCell    *string         `json:"region_name"`
	OldPayload json.RawMessage `json:"payload"`
}

// ReadArchiveFile reads an archive of either format, refusing a line longer than maxLine
// bytes (0: DefaultMaxArchiveLine). A malformed line is an error naming the file and line; a
// last line cut short is ignored (Truncated).
func ReadArchiveFile(path string, maxLine int64) (*ArchiveFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the archive: %w", err)
	}
	defer f.Close()
	af, err := ParseArchive(f, maxLine)
	if af != nil {
		af.Path = path
	}
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return af, nil
}

// DefaultMaxArchiveLine is restore's cap on one archive line (--max-line-bytes raises it). A
// row's line holds its payload twice (payload_text, and a readable copy when it is JSON), so
// 256 MiB takes any row whose payload is under about 128 MiB: Sentry's payloads are JSON
// objects of bytes to a few MiB (relocation's are the largest), so only a file that is not an
// archive, or a hand-made row, reaches it, and refusing one costs at most the cap in memory.
const DefaultMaxArchiveLine int64 = 256 << 20

// LineTooLongError is an archive line over the cap, refused before it was read whole.
type LineTooLongError struct{ Max int64 }

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("a line longer than the %s cap on an archive line (not an outboxctl archive, or a row with a larger payload): to read it, raise the cap with --max-line-bytes %s",
		bytesize.Format(e.Max), bytesize.Format(2*e.Max))
}

// readLine reads up to and including '\n', refusing a line longer than max before copying
// any byte past it: a refused line costs at most max bytes. A line that fits the reader's
// buffer is returned without a copy (valid until the next read); a longer one is copied
// chunk by chunk and joined once at its exact size, never grown by doubling (which cost
// 3.4× the line: 867 MB to refuse a 1 GB line at a 256 MiB cap). src, when it can seek (a
// file), lets a long line be measured first and read once instead (seekLine).
func readLine(br *bufio.Reader, src io.ReadSeeker, max int64) ([]byte, error) {
	chunk, err := br.ReadSlice('\n')
	if int64(len(chunk)) > max {
		return nil, &LineTooLongError{Max: max}
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return chunk, err
	}
	if src != nil {
		if start, serr := src.Seek(0, io.SeekCurrent); serr == nil {
			return seekLine(br, src, start-int64(br.Buffered())-int64(len(chunk)), int64(len(chunk)), max)
		}
	}
	chunks := [][]byte{bytes.Clone(chunk)}
	n := int64(len(chunk))
	for {
		chunk, err := br.ReadSlice('\n')
		if n+int64(len(chunk)) > max {
			return nil, &LineTooLongError{Max: max}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			line := make([]byte, 0, n+int64(len(chunk)))
			for _, c := range chunks {
				line = append(line, c...)
			}
			return append(line, chunk...), err
		}
		chunks = append(chunks, bytes.Clone(chunk))
		n += int64(len(chunk))
	}
}

// seekLine reads a line that started at offset start of src and of which n bytes were read:
// it reads on to the line's end without keeping anything, refusing it past max, then goes
// back and reads it once into a buffer of its exact size. A line over the cap costs no
// memory, one under it its length (restore --print-sql of a 200 MB row: 605 → ~400 MB).
func seekLine(br *bufio.Reader, src io.ReadSeeker, start, n, max int64) ([]byte, error) {
	var end error
	for {
		chunk, err := br.ReadSlice('\n')
		if n += int64(len(chunk)); n > max {
			return nil, &LineTooLongError{Max: max}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			end = err
			break
		}
	}
	if end != nil && !errors.Is(end, io.EOF) {
		return nil, end
	}
	if _, err := src.Seek(start, io.SeekStart); err != nil {
		return nil, err
	}
	br.Reset(src)
	line := make([]byte, n)
	if _, err := io.ReadFull(br, line); err != nil {
		return nil, err
	}
	return line, end
}

// ParseArchive reads archive lines from r, refusing a line longer than maxLine bytes (0:
// DefaultMaxArchiveLine). Errors start with the line number.
func ParseArchive(r io.Reader, maxLine int64) (*ArchiveFile, error) {
	if maxLine <= 0 {
		maxLine = DefaultMaxArchiveLine
	}
	p := newParser()
	truncated, torn, err := eachArchiveLine(r, maxLine, p.add)
	if err != nil {
		return nil, err
	}
	p.file.Truncated, p.file.Torn = truncated, torn
	return p.finish()
}

// eachArchiveLine calls line for every non-empty line of an archive, with its number. A
// line it refuses is the file's error, except: the last line cut short (no newline: a
// write a kill interrupted) ends the walk (truncated), and a line that is not JSON at all
// followed at once by a torn line (sealTornTail's, after a cut line) is skipped (torn, its
// number). Only a cut line is forgiven: one that is whole JSON but not an archive line (a
// newer format, an unknown kind) stays an error, and line must not have kept anything of a
// line that is not JSON.
func eachArchiveLine(r io.Reader, maxLine int64, line func(n int, body []byte) error) (truncated bool, torn []int, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	src, _ := r.(io.ReadSeeker)
	zr, err := decompressing(br)
	if err != nil {
		return false, nil, err
	}
	if zr != nil {
		defer zr.Close()
		br, src = bufio.NewReaderSize(zr, 1<<16), nil
		defer func() {
			if err == nil && zr.cut {
				truncated = true
			}
		}()
	}
	var bad error
	badLine := 0
	for n := 1; ; n++ {
		raw, rerr := readLine(br, src, maxLine)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return false, nil, fmt.Errorf("%d: %w", n, rerr)
		}
		last := errors.Is(rerr, io.EOF)
		body := bytes.TrimSpace(raw)
		switch {
		case bad != nil && n == badLine+1 && isTornLine(body):
			torn, bad = append(torn, badLine), nil
		case bad != nil:
			return false, nil, bad
		case len(body) == 0 || isTornLine(body): // a torn line after a whole line: a seal raced a write
		default:
			if lerr := line(n, body); lerr != nil {
				if last && raw[len(raw)-1] != '\n' {
					return true, torn, nil
				}
				if json.Valid(body) {
					return false, nil, fmt.Errorf("%d: %w", n, lerr)
				}
				bad, badLine = fmt.Errorf("%d: %w", n, lerr), n
			}
		}
		if last {
			break
		}
	}
	return false, torn, bad
}

// isTornLine says whether body is the line sealTornTail writes after a line cut short.
// Every line of a restore passes here, row lines of megabytes among them: only a short line
// (a torn line is some 60 bytes) is decoded.
func isTornLine(body []byte) bool {
	if len(body) > maxTornLine || !bytes.Contains(body, []byte(KindTorn)) {
		return false
	}
	var h lineHead
	return json.Unmarshal(body, &h) == nil && h.Kind == KindTorn && h.V >= FormatUnsealed
}

// maxTornLine bounds what isTornLine reads: a torn line is its version, kind and time.
const maxTornLine = 128

type parser struct {
	file    *ArchiveFile
	ops     map[string]*ArchivedOperation
	batches map[string]map[int]*ArchivedBatch
	// marks are commit/abort lines, applied once every row is read.
	marks  []fileLine
	legacy *ArchivedOperation
	nLegac int
}

func newParser() *parser {
	return &parser{file: &ArchiveFile{}, ops: map[string]*ArchivedOperation{}, batches: map[string]map[int]*ArchivedBatch{}}
}

// add reads line n. A line that is not an archive line is an error; a line that is one but
// not as outboxctl wrote it marks its operation (Problem), so the file's other operations
// can still be restored.
func (p *parser) add(n int, body []byte) error {
	var h lineHead
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("not an archive line: %w", err)
	}
	if h.V == 0 && h.Kind == "" {
		var l legacyLine
		if err := json.Unmarshal(body, &l); err != nil {
			return fmt.Errorf("not an archive line: %w", err)
		}
		return p.addLegacy(l)
	}
	p.legacy = nil
	if h.V != FormatVersion && h.V != FormatUnsealed {
		return fmt.Errorf("archive format version %d is not supported (this outboxctl reads 1 to %d): upgrade outboxctl", h.V, FormatVersion)
	}
	var l fileLine
	if err := json.Unmarshal(body, &l); err != nil {
		return fmt.Errorf("not an archive line: %w", err)
	}
	if !validOpID(l.OperationMeta.ID) || strings.HasPrefix(l.OperationMeta.ID, "legacy-") {
		return fmt.Errorf("invalid operation id %q", l.OperationMeta.ID)
	}
	op := p.operation(l.V, l.OperationMeta)
	switch l.Kind {
	case KindOperation:
	case KindRow:
		if l.Batch < 1 || l.Row.ID < 1 {
			return errors.New("row line without a batch or an id")
		}
		b := p.batch(op, l.Batch)
		b.Rows = append(b.Rows, l.Row)
	case KindCommit, KindAbort:
		if l.Batch < 1 {
			return fmt.Errorf("%s line without a batch", l.Kind)
		}
		p.marks = append(p.marks, l)
	default:
		return fmt.Errorf("unknown line kind %q", l.Kind)
	}
	if op.Problem == nil {
		if problem := op.check(l); problem != "" {
			op.Problem = fmt.Errorf("line %d: %s", n, problem)
		}
	}
	op.sum.Write(body)
	op.sum.Write([]byte{'\n'})
	return nil
}

// check says what is wrong with line l of the operation ("" when nothing): fields of another
// operation, a row outside the operation's shard or one PostgreSQL could not hold, a marker
// whose checksum does not match the lines before it.
func (o *ArchivedOperation) check(l fileLine) string {
	if l.V != o.Version {
		return fmt.Sprintf("its format version %d differs from that of operation %s's first line (%d)", l.V, o.ID, o.Version)
	}
	// Version 3 seals every operation: without these fields the checksum would not be
	// checked, so their absence is an edit, not an old archive.
	if l.V == FormatVersion && (l.Checksum != ChecksumSHA256 || l.Shard == nil) {
		return fmt.Sprintf("a version %d line without its shard and its checksum fields, which outboxctl writes on every line of operation %s", l.V, o.ID)
	}
	if !o.same(l.OperationMeta) {
		return fmt.Sprintf("its operation fields (command, user, time, schema, table, shard…) differ from those of operation %s's first line", o.ID)
	}
	switch l.Kind {
	case KindRow:
		if o.shard == nil {
			first := ArchiveShard{Scope: l.ShardScope, ID: l.ShardID, Cell: l.Cell}
			o.shard = &first
		}
		if !o.shard.Holds(l.Row) {
			return fmt.Sprintf("row %d is in shard %s, not in operation %s's shard %s", l.Row.ID, ArchiveShard{Scope: l.ShardScope, ID: l.ShardID, Cell: l.Cell}, o.ID, o.shard)
		}
		if (l.Payload != nil && strings.IndexByte(*l.Payload, 0) >= 0) || (l.Cell != nil && strings.IndexByte(*l.Cell, 0) >= 0) {
			return fmt.Sprintf("row %d holds a NUL byte, which PostgreSQL text cannot", l.Row.ID)
		}
	case KindCommit, KindAbort:
		if o.Checksum != ChecksumSHA256 {
			return ""
		}
		if want := hex.EncodeToString(o.sum.Sum(nil)); l.SHA256 != want {
			return fmt.Sprintf("the checksum of batch %d's %s marker does not match operation %s's lines before it (a line of it was edited, removed, added or moved)", l.Batch, l.Kind, o.ID)
		}
	}
	return ""
}

// addLegacy reads a previous-release line: consecutive lines of one command, reason and
// table make one operation.
func (p *parser) addLegacy(l legacyLine) error {
	if l.Row.ID < 1 || l.Table == "" || l.Command == "" {
		return errors.New("not an archive line: no id, table or command")
	}
	m := l.OperationMeta
	if p.legacy == nil || p.legacy.Command != m.Command || p.legacy.Reason != m.Reason || p.legacy.Schema != m.Schema || p.legacy.Table != m.Table {
		p.nLegac++
		m.ID, m.Started, m.PayloadType = fmt.Sprintf("legacy-%d", p.nLegac), l.ArchivedAt, "jsonb"
		p.legacy = p.operation(0, m)
		p.legacy.Legacy = true
		p.legacy.Batches = append(p.legacy.Batches, &ArchivedBatch{Seq: 1, State: BatchLegacy})
	}
	r := l.Row
	r.Cell = l.OldCell
	if p.legacy.CellColumn == "" && r.Cell != nil {
		p.legacy.CellColumn = "region_name"
	}
	// The previous release's reading of its payload: JSON as written, "null" as SQL NULL.
	if s := string(l.OldPayload); len(s) > 0 && s != "null" {
		r.Payload = &s
	}
	b := p.legacy.Batches[0]
	b.Rows = append(b.Rows, r)
	return nil
}

// operation is the operation of a line of version v, created at its first line.
func (p *parser) operation(v int, m OperationMeta) *ArchivedOperation {
	if op, ok := p.ops[m.ID]; ok {
		return op
	}
	op := &ArchivedOperation{OperationMeta: m, Version: v, shard: m.Shard, sum: sha256.New()}
	p.ops[m.ID] = op
	p.batches[m.ID] = map[int]*ArchivedBatch{}
	p.file.Operations = append(p.file.Operations, op)
	return op
}

func (p *parser) batch(op *ArchivedOperation, seq int) *ArchivedBatch {
	if b, ok := p.batches[op.ID][seq]; ok {
		return b
	}
	b := &ArchivedBatch{Seq: seq, State: BatchStaged}
	p.batches[op.ID][seq] = b
	op.Batches = append(op.Batches, b)
	return b
}

func (p *parser) finish() (*ArchiveFile, error) {
	for _, m := range p.marks {
		b := p.batch(p.ops[m.OperationMeta.ID], m.Batch)
		if m.Kind == KindAbort {
			if b.State != BatchCommitted {
				b.State, b.Error = BatchAborted, m.Error
			}
			continue
		}
		b.State = BatchCommitted
		if b.Deleted == nil {
			b.Deleted = map[int64]bool{}
		}
		for _, id := range m.IDs {
			b.Deleted[id] = true
		}
	}
	return p.file, nil
}
