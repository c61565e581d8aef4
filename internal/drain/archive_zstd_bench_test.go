package drain

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// benchArchive is a compact's archive of n rows whose payloads look like Sentry's (a JSON
// object of ~300 bytes, ids and names varying), as the archive writes it.
func benchArchive(b *testing.B, n int) []byte {
	b.Helper()
	path := filepath.Join(b.TempDir(), "a.jsonl")
	op, err := OpenOperation(path, meta("compact"))
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]Row, 0, 10_000)
	for i := range n {
		p := fmt.Sprintf(`{"organization_id": %d, "user_id": %d, "email": "user%d@example.com", "role": "member", "flags": {"sso:linked": true, "member-limit:restricted": false}, "inviter_id": %d, "date_added": "2026-11-%02dT10:%02d:%02d.%06dZ", "teams": [%d, %d], "token": "%x"}`,
			42, 1000+i%977, i%5003, 7+i%13, 1+i%28, i%60, i%59, i%1000003, i%71, i%89, uint64(i)*0x9E3779B97F4A7C15)
		rows = append(rows, Row{ID: int64(i + 1), ShardScope: 0, ShardID: 42, Category: 2, ObjectID: int64(i % 977), Payload: &p,
			ScheduledFrom: at.Add(time.Duration(i) * time.Millisecond), ScheduledFor: at.Add(time.Hour), DateAdded: at.Add(time.Duration(i) * time.Millisecond)})
		if len(rows) == cap(rows) || i == n-1 {
			bt, err := op.Stage(rows)
			if err != nil {
				b.Fatal(err)
			}
			if err := op.Commit(bt); err != nil {
				b.Fatal(err)
			}
			rows = rows[:0]
		}
	}
	op.Close()
	return mustReadB(b, path)
}

func mustReadB(b *testing.B, path string) []byte {
	b.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkArchiveCompression compresses and decompresses a 200,000-row compact archive (a
// fifth of #40's 1M-row one; OUTBOXCTL_COMPRESS_ROWS sets another size), 8 MB a frame with zstd (fastest and default levels) and gzip (fastest and
// default): MB/s of archive lines each way and the ratio. The archive is written inside the
// repair's transaction, so the compressor's speed is the repair's: outboxctl uses zstd's
// default level (archivezstd.go says why).
//
//	go test ./internal/drain -run '^$' -bench ArchiveCompression -benchtime 3x
func BenchmarkArchiveCompression(b *testing.B) {
	rows := 200_000
	if n, err := strconv.Atoi(os.Getenv("OUTBOXCTL_COMPRESS_ROWS")); err == nil && n > 0 {
		rows = n
	}
	raw := benchArchive(b, rows)
	var chunks [][]byte
	for rest := raw; len(rest) > 0; {
		n := len(rest)
		if n > 1<<23 {
			n = 1<<23 + bytes.IndexByte(rest[1<<23:], '\n') + 1
		}
		chunks, rest = append(chunks, rest[:n]), rest[n:]
	}
	type codec struct {
		name     string
		compress func([]byte) []byte
		expand   func([]byte) []byte
	}
	zstdAt := func(level zstd.EncoderLevel) codec {
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1))
		return codec{name: "zstd-" + level.String(), compress: func(in []byte) []byte { return enc.EncodeAll(in, nil) }, expand: func(in []byte) []byte {
			dec, _ := zstd.NewReader(bytes.NewReader(in), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
			defer dec.Close()
			out, _ := io.ReadAll(dec)
			return out
		}}
	}
	gzipAt := func(name string, level int) codec {
		return codec{name: name, compress: func(in []byte) []byte {
			var buf bytes.Buffer
			w, _ := gzip.NewWriterLevel(&buf, level)
			_, _ = w.Write(in)
			_ = w.Close()
			return buf.Bytes()
		}, expand: func(in []byte) []byte {
			r, _ := gzip.NewReader(bytes.NewReader(in))
			out, _ := io.ReadAll(r)
			return out
		}}
	}
	for _, c := range []codec{zstdAt(zstd.SpeedFastest), zstdAt(zstd.SpeedDefault), gzipAt("gzip-fastest", gzip.BestSpeed), gzipAt("gzip-default", gzip.DefaultCompression)} {
		b.Run(c.name, func(b *testing.B) {
			var packed []byte
			var in, out time.Duration
			for range b.N {
				// One frame (gzip: member) per batch of 10,000 rows, as compact writes them.
				start := time.Now()
				packed = packed[:0]
				for _, chunk := range chunks {
					packed = append(packed, c.compress(chunk)...)
				}
				in += time.Since(start)
				start = time.Now()
				back := c.expand(packed)
				out += time.Since(start)
				if !bytes.Equal(back, raw) {
					b.Fatal("round trip differs")
				}
			}
			mb := float64(len(raw)*b.N) / 1e6
			b.ReportMetric(mb/in.Seconds(), "compress-MB/s")
			b.ReportMetric(mb/out.Seconds(), "expand-MB/s")
			b.ReportMetric(float64(len(raw))/float64(len(packed)), "ratio")
			b.ReportMetric(float64(len(raw))/1e6, "archive-MB")
		})
	}
}
