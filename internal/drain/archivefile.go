package drain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	Legacy  bool
	Batches []*ArchivedBatch
}

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
	// Truncated is set when the last line was cut short (a write interrupted before its
	// sync: nothing it held was deleted) and ignored.
	Truncated bool
}

// opIDPattern is compiled on first use: its {0,99} unrolls into a large program (0.4–2.5 ms
// and 1,300 allocations), which every command paid at start-up when it was a package variable.
var opIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$`) })

func validOpID(s string) bool { return opIDPattern().MatchString(s) }

// fileLine is any line of either format.
type fileLine struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	OperationMeta
	Batch int `json:"batch"`
	Row
	IDs   []int64 `json:"ids"`
	Error string  `json:"error"`
	// The previous release's fields.
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
// 3.4× the line: 867 MB to refuse a 1 GB line at a 256 MiB cap).
func readLine(br *bufio.Reader, max int64) ([]byte, error) {
	var chunks [][]byte
	var n int64
	for {
		chunk, err := br.ReadSlice('\n')
		if n+int64(len(chunk)) > max {
			return nil, &LineTooLongError{Max: max}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if chunks == nil {
				return chunk, err
			}
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

// ParseArchive reads archive lines from r, refusing a line longer than maxLine bytes (0:
// DefaultMaxArchiveLine). Errors start with the line number.
func ParseArchive(r io.Reader, maxLine int64) (*ArchiveFile, error) {
	if maxLine <= 0 {
		maxLine = DefaultMaxArchiveLine
	}
	p := newParser()
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		line, err := readLine(br, maxLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%d: %w", n, err)
		}
		last := errors.Is(err, io.EOF)
		if body := bytes.TrimSpace(line); len(body) > 0 {
			if perr := p.add(body); perr != nil {
				if last && line[len(line)-1] != '\n' {
					p.file.Truncated = true
					break
				}
				return nil, fmt.Errorf("%d: %w", n, perr)
			}
		}
		if last {
			break
		}
	}
	return p.finish()
}

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

func (p *parser) add(body []byte) error {
	var l fileLine
	if err := json.Unmarshal(body, &l); err != nil {
		return fmt.Errorf("not an archive line: %w", err)
	}
	if l.V == 0 && l.Kind == "" {
		return p.addLegacy(l)
	}
	p.legacy = nil
	if l.V != FormatVersion {
		return fmt.Errorf("archive format version %d is not supported (this outboxctl reads 1 and %d): upgrade outboxctl", l.V, FormatVersion)
	}
	if !validOpID(l.OperationMeta.ID) || strings.HasPrefix(l.OperationMeta.ID, "legacy-") {
		return fmt.Errorf("invalid operation id %q", l.OperationMeta.ID)
	}
	op := p.operation(l.OperationMeta)
	switch l.Kind {
	case KindOperation:
		return nil
	case KindRow:
		if l.Batch < 1 || l.Row.ID < 1 {
			return errors.New("row line without a batch or an id")
		}
		b := p.batch(op, l.Batch)
		b.Rows = append(b.Rows, l.Row)
		return nil
	case KindCommit, KindAbort:
		if l.Batch < 1 {
			return fmt.Errorf("%s line without a batch", l.Kind)
		}
		p.marks = append(p.marks, l)
		return nil
	}
	return fmt.Errorf("unknown line kind %q", l.Kind)
}

// addLegacy reads a previous-release line: consecutive lines of one command, reason and
// table make one operation.
func (p *parser) addLegacy(l fileLine) error {
	if l.Row.ID < 1 || l.Table == "" || l.Command == "" {
		return errors.New("not an archive line: no id, table or command")
	}
	m := l.OperationMeta
	if p.legacy == nil || p.legacy.Command != m.Command || p.legacy.Reason != m.Reason || p.legacy.Schema != m.Schema || p.legacy.Table != m.Table {
		p.nLegac++
		m.ID, m.Started, m.PayloadType = fmt.Sprintf("legacy-%d", p.nLegac), l.ArchivedAt, "jsonb"
		p.legacy = p.operation(m)
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

func (p *parser) operation(m OperationMeta) *ArchivedOperation {
	if op, ok := p.ops[m.ID]; ok {
		return op
	}
	op := &ArchivedOperation{OperationMeta: m}
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
