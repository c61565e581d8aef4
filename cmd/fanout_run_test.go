package cmd_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/render"
)

// framesWriter collects a watch's output on a pipe and cancels the run once it holds
// frames frames (each begins with a "--- " line), so the test waits for output, not time.
type framesWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	frames int
	cancel context.CancelFunc
}

func (w *framesWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Count("\n"+w.buf.String(), "\n--- ") > w.frames {
		w.cancel()
	}
	return n, err
}

func (w *framesWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestFanOutWatchMergesEachFrame runs depth over two contexts under --watch on a pipe: every
// frame is the merged document (rows tagged by context, in the single-target order), and
// the frames follow each row by context and category, so the second frame shows no change.
func TestFanOutWatchMergesEachFrame(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	io, _, errOut := render.Test()
	out := &framesWriter{frames: 2, cancel: cancel}
	io.Out = out
	io.Getenv = func(k string) string { return map[string]string{"OUTBOXCTL_CONFIG": c.config}[k] }
	code := cmd.Main(ctx, []string{"--context", "us,de", "depth", "--watch", "100ms", "-o", "csv"}, io)
	if code != 0 || errOut.Len() > 0 {
		t.Fatalf("exit %d (want 0: a cancelled watch ends cleanly), stderr:\n%s", code, errOut)
	}
	frames := strings.Split(out.String(), "--- ")
	if len(frames) < 3 || frames[0] != "" {
		t.Fatalf("want two frames at least, stdout:\n%s", out)
	}
	rows := func(change string) string {
		return strings.ReplaceAll(`context,category,category_name,depth,depth_change,depth_per_s
us,,(total),2,C
de,,(total),3,C
de,2,ORGANIZATION_UPDATE,1,C
us,3,ORGANIZATION_MEMBER_UPDATE,2,C
de,3,ORGANIZATION_MEMBER_UPDATE,2,C
`, "C", change)
	}
	for i, want := range []string{rows(","), rows("0,0")} {
		title, body, _ := strings.Cut(frames[i+1], "\n")
		if !strings.HasSuffix(title, "  every 100ms  depth") || body != want {
			t.Errorf("frame %d:\n--- %s\n%s\nwant the rows\n%s", i+1, title, body, want)
		}
	}
}

// TestFanOutUsageErrorOnce: flags are validated and names resolved once, before any
// context runs, so a usage error over several contexts is that usage error (exit 2, with
// its hint), not one "context gone" line per context and exit 1, as when the command line
// was parsed again per context: every context was fine, the command line was not.
func TestFanOutUsageErrorOnce(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	wantRun(t, c.config, 2, "", "Error: `--limit` must be at least 1 (default 20)\nTry: outboxctl shards --limit 100\n",
		"--context", "us,de", "shards", "--limit", "0")
	wantRun(t, c.config, 2, "", "Error: invalid message id \"x\": want an integer id\nTry: outboxctl inspect message 123456\n",
		"--context", "us,de", "inspect", "message", "x")
}

// TestFanOutJSONFollowsItsSchema: over two contexts, a table (shards), a document of
// several sections (killswitch list) and a card (inspect message, a row per context) print
// as their fan-out schemas say (docs/schema/*.fanout.json, which the output hook validates
// them against): every row leads with its context.
func TestFanOutJSONFollowsItsSchema(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	for _, args := range [][]string{
		{"shards"},
		{"killswitch", "list"},
		{"inspect", "message", "1"},
	} {
		code, out, errOut := runConfig(c.config, append([]string{"--context", "us,de", "-o", "json"}, args...))
		if code != 0 && code != 1 || !strings.Contains(out, `"context": "us"`) {
			t.Errorf("%v over us,de: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
}
