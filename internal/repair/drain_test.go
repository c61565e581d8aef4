package repair

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
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

// TestDrainOutcome: how a drain's result becomes the run's error. A COMMIT in doubt is the
// drain's own account (never the bare "interrupted"), and the interrupt's once a signal came;
// a signal mid-drain says what was delivered and what the shard kept; a failed delivery says
// where the schedule stands; a clean drain is nil.
func TestDrainOutcome(t *testing.T) {
	t.Parallel()
	k := query.ShardKey{Scope: query.Enum{Value: 0, Name: "ORGANIZATION_SCOPE"}, ID: 42}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	commitLost := errors.New("the COMMIT got no answer")
	after := drain.After{Left: int64(3), Delay: "due now"}
	inDoubt := drain.Result{Delivered: 2, InDoubt: &drain.InDoubt{Messages: 2, Deleted: 2, Outcome: drain.Committed}}
	for _, c := range []struct {
		name        string
		ctx         context.Context
		res         drain.Result
		runErr      error
		interrupted bool
		account     bool
		want        string
	}{
		{"in doubt, settled", context.Background(), inDoubt, commitLost, false, true, "the COMMIT got no answer"},
		{"in doubt after a signal", cancelled, inDoubt, commitLost, true, true, "the COMMIT got no answer"},
		{"interrupted", cancelled, drain.Result{Delivered: 7}, context.Canceled, true, true, "interrupted after 7 delivered message(s); the shard is due now"},
		{"failed delivery", context.Background(), drain.Result{Failed: &drain.Message{ID: 9, CategoryName: "C", Object: 1}, FailedErr: errors.New("exit 3")}, nil, false, true,
			"delivery of message 9 (C, object 1) failed: exit 3; the shard stays in backoff with the message at its head"},
		{"done", context.Background(), drain.Result{Delivered: 1}, nil, false, false, ""},
	} {
		err := drainOutcome(c.ctx, k, c.res, c.runErr, false, after, nil)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want nil", c.name, err)
			}
			continue
		}
		var f *Failure
		if !errors.As(err, &f) || f.Interrupted() != c.interrupted || f.Account() != c.account || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %T %v (interrupted %v), want an account with %q, interrupted %v", c.name, err, err, f != nil && f.Interrupted(), c.want, c.interrupted)
		}
	}
}
