package drain

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// ArchiveSize is what a repair's archive will take, for its plan (#40: a compact of a 1M-row
// hot shard wrote 650 MB into the state directory and its plan never said so).
type ArchiveSize struct {
	// Path is the file (--archive), or "" for an operation's own file in Dir.
	Path string
	// Dir is the directory the archive goes to.
	Dir string
	// Bytes is the estimated size on disk (compressed when the file is); Lines the
	// uncompressed lines it holds.
	Bytes, Lines int64
	Compressed   bool
	// Free is the space free to this user in Dir's file system, -1 when unknown.
	Free int64
}

// sampleRows is about how many rows EstimateArchive writes out to measure a line and its
// compression (Sampler keeps between it and twice it): spread over the selection, enough to
// average payloads of every size.
const sampleRows = 2000

// EstimateArchive estimates the archive of count rows (a repair's selection, of which sample
// is an even spread) written to path ("": an operation's own file under the state
// directory), by writing the sample as the archive would (meta's lines, compressed when the
// file is), and reads the free space where it goes.
func EstimateArchive(path string, meta OperationMeta, count int64, sample []Row) (ArchiveSize, error) {
	s := ArchiveSize{Path: path, Dir: filepath.Dir(path), Free: -1}
	if path == "" {
		p, err := OperationArchivePath(NewOperationID(meta.Command, time.Now()))
		if err != nil {
			return s, err
		}
		s.Dir = filepath.Dir(p)
		path = p
	}
	s.Compressed = Compressed(path)
	s.Free = FreeSpace(s.Dir)
	if count == 0 || len(sample) == 0 {
		return s, nil
	}
	var buf []byte
	for _, r := range sample {
		l := rowLine{V: FormatVersion, Kind: KindRow, OperationMeta: meta, Batch: 1, StagedAt: time.Now().UTC(), Row: r}
		if p := r.Payload; p != nil && json.Valid([]byte(*p)) {
			l.PayloadJSON = json.RawMessage(*p)
		}
		b, err := json.Marshal(l)
		if err != nil {
			return s, err
		}
		buf = append(append(buf, b...), '\n')
	}
	n := len(sample)
	s.Lines = int64(float64(len(buf)) / float64(n) * float64(count))
	s.Bytes = s.Lines
	if s.Compressed {
		packed, err := compressFrame(buf)
		if err != nil {
			return s, err
		}
		s.Bytes = int64(float64(s.Lines) * float64(len(packed)) / float64(len(buf)))
	}
	return s, nil
}

// Sampler keeps an even spread of at most 2 × sampleRows of the rows it is given, whatever
// their number: every row until it holds twice the sample, then every other one it holds
// and every 2nd row after, and so on (a plan reads a million rows without keeping them).
type Sampler[T any] struct {
	Rows   []T
	stride int64
	seen   int64
}

// Add offers r.
func (s *Sampler[T]) Add(r T) {
	if s.stride == 0 {
		s.stride = 1
	}
	if s.seen%s.stride == 0 {
		if len(s.Rows) == 2*sampleRows {
			kept := s.Rows[:0]
			for i := 0; i < len(s.Rows); i += 2 {
				kept = append(kept, s.Rows[i])
			}
			s.Rows, s.stride = kept, s.stride*2
		}
		if s.seen%s.stride == 0 {
			s.Rows = append(s.Rows, r)
		}
	}
	s.seen++
}

// Fits says whether the archive fits in the free space with a margin (the estimate is a
// sample's, and the markers add a little): a fifth more than the estimate, and 16 MiB.
func (s ArchiveSize) Fits() bool {
	return s.Free < 0 || s.Bytes+s.Bytes/5+16<<20 <= s.Free
}

// PlanLine is the plan's line for the archive: its size, where it goes and the space there.
func (s ArchiveSize) PlanLine() string {
	where := s.Path
	if where == "" {
		where = s.Dir + string(filepath.Separator) + " (a file of its own)"
	}
	size := "~" + approxBytes(s.Bytes)
	if s.Compressed {
		size += fmt.Sprintf(" (zstd; %s of lines)", approxBytes(s.Lines))
	}
	free := "free space unknown"
	if s.Free >= 0 {
		free = approxBytes(s.Free) + " free there"
	}
	return fmt.Sprintf("archive %s in %s, %s", size, textsafe.Clean(where), free)
}

// NoRoom says why the archive does not fit (Fits is false), for the refusal's line.
func (s ArchiveSize) NoRoom() string {
	where := s.Dir
	if s.Path != "" {
		where = s.Path
	}
	return fmt.Sprintf("the archive needs ~%s and %s has %s free", approxBytes(s.Bytes), textsafe.Clean(where), approxBytes(s.Free))
}

// NoRoomError refuses a repair whose archive would not fit (Fits is false); Name is the
// stem of the file name its refusal suggests for --archive elsewhere.
type NoRoomError struct {
	Size ArchiveSize
	Name string
}

func (e *NoRoomError) Error() string { return e.Size.NoRoom() }

// freeSpaceHook, when set, answers FreeSpace for the directories it knows (a test's own
// directory given a size: the refusal is tested without filling a disk).
var freeSpaceHook atomic.Pointer[func(dir string) (int64, bool)] //nolint:gochecknoglobals // a test seam, nil in use

// SetFreeSpaceHook makes FreeSpace ask hook first (nil: the file system only). For tests.
func SetFreeSpaceHook(hook func(dir string) (int64, bool)) {
	if hook == nil {
		freeSpaceHook.Store(nil)
		return
	}
	freeSpaceHook.Store(&hook)
}

// FreeSpace is the space free to this user in dir's file system (statfs; on Windows
// GetDiskFreeSpaceEx), or in its nearest existing parent (the state directory is created by
// the first archive): -1 when it cannot be read.
func FreeSpace(dir string) int64 {
	if h := freeSpaceHook.Load(); h != nil {
		if n, ok := (*h)(dir); ok {
			return n
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if n, err := freeBytes(d); err == nil {
			return n
		}
		if filepath.Dir(d) == d {
			return -1
		}
	}
}

// approxBytes is n for a person, to one decimal of its unit: "650.2 MiB", "1.0 MiB", "812 B".
func approxBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for ; v >= unit && i < 3; i++ {
		v /= unit
	}
	return fmt.Sprintf("%.1f %s", v, []string{"KiB", "MiB", "GiB", "TiB"}[i])
}
