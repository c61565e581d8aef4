package drain

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Compressed archives (#40: a compact of a 1M-row hot shard wrote 650 MB): a file whose name
// ends in CompressedExt holds the same lines as a plain one, as a sequence of zstd frames,
// one frame per write (a batch's rows, a marker). Every write is still one write(2) and one
// fsync before the DELETE, so the archive's two phases, its checksums (over the lines as
// restore reads them, decompressed) and the settle of a COMMIT in doubt are those of a plain
// file; `zstdcat FILE` reads it. A kill cuts only the last frame short: restore reads the
// frames before it (Truncated), and the next run to append to the file first cuts that frame
// off (sealCompressedTail) so its own frames start where a reader expects one.
//
// Why zstd at its default level: at this size the archive is written inside the repair's
// transaction, so the compressor's speed is the repair's. On these lines (BenchmarkArchive-
// Compression, docs/performance.md) zstd's default level compressed at 131–172 MB/s and
// expanded at 88–108 MB/s to 1/16.4 of the size; gzip's fastest level 35–140 and 42–179 MB/s
// to 1/12.2, its default 12–31 MB/s; zstd's fastest level was no faster here (53–70 MB/s).
const CompressedExt = ".zst"

// Compressed says whether the archive at path is written compressed (its name ends in
// CompressedExt). Reading does not go by the name: ReadArchiveFile recognises the frames.
func Compressed(path string) bool { return strings.HasSuffix(path, CompressedExt) }

// zstdMagic starts every zstd frame; skippable frames start with 0x184D2A50 to 0x184D2A5F.
const (
	zstdMagic     = 0xFD2FB528
	skippableMask = 0xFFFFFFF0
	skippableBase = 0x184D2A50
)

// zstdEncoder is shared by every compressed archive of the process: EncodeAll is safe for
// concurrent use and makes one whole frame (with its content checksum) per call.
var zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) { //nolint:gochecknoglobals // one encoder per process
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
})

// compressFrame is buf as one zstd frame.
func compressFrame(buf []byte) ([]byte, error) {
	enc, err := zstdEncoder()
	if err != nil {
		return nil, fmt.Errorf("writing the archive: %w", err)
	}
	return enc.EncodeAll(buf, make([]byte, 0, len(buf)/4+64)), nil
}

// isZstd says whether head (a file's first bytes) starts a zstd frame.
func isZstd(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	m := binary.LittleEndian.Uint32(head)
	return m == zstdMagic || m&skippableMask == skippableBase
}

// decompressing is br's content decompressed when br starts with a zstd frame, else nil. A
// last frame cut short ends the stream (its cut is set): the lines before it are read, and
// eachArchiveLine sees the cut line as the last, without its newline. Close it.
func decompressing(br *bufio.Reader) (*cutReader, error) {
	head, _ := br.Peek(4)
	if !isZstd(head) {
		return nil, nil
	}
	dec, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, err
	}
	return &cutReader{dec: dec}, nil
}

// cutReader reads a zstd stream, turning a stream that ends inside a frame into an end of
// file (a kill's cut): cut says it happened.
type cutReader struct {
	dec *zstd.Decoder
	cut bool
}

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.dec.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		c.cut = true
		return n, io.EOF
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, fmt.Errorf("the archive's compressed data is damaged: %w", err)
	}
	return n, err
}

func (c *cutReader) Close() { c.dec.Close() }

// frameEnd is the offset after the zstd frame (or skippable frame) at off in a file of size
// bytes, read through ra without decompressing it (the frame and block headers say where
// each part ends); ok is false when the frame runs past the end (a write cut short) or is
// not a frame at all.
func frameEnd(ra io.ReaderAt, off, size int64) (end int64, ok bool) {
	var b [14]byte
	read := func(at int64, n int) []byte {
		if at+int64(n) > size {
			return nil
		}
		if _, err := ra.ReadAt(b[:n], at); err != nil {
			return nil
		}
		return b[:n]
	}
	h := read(off, 5)
	if h == nil {
		return 0, false
	}
	switch m := binary.LittleEndian.Uint32(h); {
	case m&skippableMask == skippableBase:
		if h = read(off+4, 4); h == nil {
			return 0, false
		}
		end = off + 8 + int64(binary.LittleEndian.Uint32(h))
		return end, end <= size
	case m != zstdMagic:
		return 0, false
	}
	fhd := h[4]
	single := fhd>>5&1 == 1
	fcs := [4]int64{0, 2, 4, 8}[fhd>>6]
	if fcs == 0 && single {
		fcs = 1
	}
	pos := off + 5 + fcs + [4]int64{0, 1, 2, 4}[fhd&3]
	if !single {
		pos++ // the window descriptor
	}
	for {
		bh := read(pos, 3)
		if bh == nil {
			return 0, false
		}
		v := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
		last, typ, n := v&1 == 1, v>>1&3, int64(v>>3)
		switch typ {
		case 1: // RLE: one byte repeated n times
			n = 1
		case 3:
			return 0, false
		}
		pos += 3 + n
		if pos > size {
			return 0, false
		}
		if last {
			break
		}
	}
	if fhd>>2&1 == 1 {
		pos += 4 // the content checksum
	}
	return pos, pos <= size
}

// wholeFrames is how many bytes of f (size bytes) are whole zstd frames from its start: less
// than size when its last write was cut short.
func wholeFrames(f io.ReaderAt, size int64) int64 {
	var off int64
	for off < size {
		end, ok := frameEnd(f, off, size)
		if !ok {
			return off
		}
		off = end
	}
	return off
}

// sealCompressedTail cuts off, before a run appends to a compressed archive, the last frame
// of the file when a kill cut it short: appended after it, the new frames would be read as
// its continuation. Its lines were never whole on disk, so nothing a restore could use is
// lost (a staged batch is synced before its DELETE; a marker cut short reads as no marker,
// as a cut line does in a plain archive). It first takes the file's lock exclusive, so that
// no other run is writing to it (its write in flight would look like a cut frame); when one
// is, it refuses, naming the way out.
func sealCompressedTail(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	whole := wholeFrames(f, st.Size())
	if whole == st.Size() {
		return nil
	}
	if whole == 0 && st.Size() > 0 {
		head := make([]byte, 4)
		if _, err := f.ReadAt(head, 0); err != nil || !isZstd(head) {
			return fmt.Errorf("it is not a compressed archive (its name ends in %s): pass --archive with a new file", CompressedExt)
		}
	}
	if !canLock {
		return fmt.Errorf("its last write was cut short and this system cannot tell whether another run is writing to it: pass --archive with a new file")
	}
	if err := tryLock(f); err != nil {
		return fmt.Errorf("another run is writing to it: pass --archive with a new file")
	}
	defer lockShared(f) //nolint:errcheck // converting back to shared cannot fail where the exclusive lock was taken
	if err := f.Truncate(whole); err != nil {
		return err
	}
	return f.Sync()
}
