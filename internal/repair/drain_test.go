package repair

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/drain"
)

// TestDrainArchiveNoteEscapesThePath: the "archiving to" line on stderr shows a --archive
// path holding control characters escaped, as every other line that quotes the operator's
// input does; it printed the path raw, so a path could retitle or clear the terminal.
func TestDrainArchiveNoteEscapesThePath(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a\x1b]0;pwned\x07.jsonl")
	var errOut bytes.Buffer
	meta := drain.OperationMeta{Command: "drain", User: "u", Table: "sentry_regionoutbox", PayloadType: "jsonb",
		Shard: &drain.ArchiveShard{Scope: 0, ID: 1}}
	started := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	m := &Drain{Env: Env{Now: func() time.Time { return started }}, DrainRun: DrainRun{Flags: DrainFlags{Archive: path}, Stderr: &errOut}}
	op, err := m.openArchive(meta)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	want := "archiving to " + filepath.Dir(path) + `/a\x1b]0;pwned\x07.jsonl (operation 20261201T100000Z-drain-`
	if !strings.HasPrefix(errOut.String(), want) || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}
