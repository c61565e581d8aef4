package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// stallMsg is the one line a statement the server never answers ends with, under
// --statement-timeout 1s.
const stallMsg = "no answer from PostgreSQL within 4s (the statement timeout, 1s, plus 3s): the server, or a proxy or the network before it, stopped answering; check the server and what is between (PgBouncer, a proxy, the network); raise --statement-timeout if the statement is only slow"

// runStalled runs outboxctl in-process against dsn, failing the test if it hangs.
func runStalled(t *testing.T, dsn, schema string, args ...string) (code int, stdout, stderr string, elapsed time.Duration) {
	t.Helper()
	io, out, errOut := render.Test()
	elapsed, _ = testdb.Within(t, 20*time.Second, "outboxctl against a silent server", func() error {
		code = cmd.Main(context.Background(), append([]string{"--dsn", dsn, "--schema", schema, "--statement-timeout", "1s", "--connect-timeout", "1s"}, args...), io)
		return nil
	})
	return code, out.String(), errOut.String(), elapsed
}

func TestStalledServerEndsReadsAndDrains(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seedGroups(t, schema, 3)
	for _, args := range [][]string{
		{"depth"},
		{"shards", "-o", "json"},
		{"inspect", "shard", "organization", "1", "--all"},
		{"drain", "organization", "1", "--handler", "discard", "--yes", "--archive", "ARCHIVE"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			for i, a := range args {
				if a == "ARCHIVE" {
					args[i] = t.TempDir() + "/archive.jsonl"
				}
			}
			p := testdb.NewProxy(t)
			p.SilenceAfterStartup()
			code, out, errOut, elapsed := runStalled(t, p.DSN(), schema, args...)
			if code != cmd.ExitError || out != "" || errOut != "Error: "+stallMsg+"\n" {
				t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if elapsed > 11*time.Second {
				t.Errorf("it took %s, want the statement timeout plus a few seconds", elapsed)
			}
		})
	}
	if n := countRows(t, schema); n != 3 {
		t.Errorf("%d rows left, want the 3 nothing could touch", n)
	}
}

// TestStalledServerMidDrain: the server stops answering after a delivery, before the drain
// deletes it: the drain ends at the statement's deadline and its summary says what it could
// not read ("unknown"), never a zero it did not read.
func TestStalledServerMidDrain(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seedGroups(t, schema, 3)
	p := testdb.NewProxy(t)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		p.Silence() // delivered; the server stops answering before the drain deletes it
	}))
	t.Cleanup(recv.Close)
	code, out, errOut, elapsed := runStalled(t, p.DSN(), schema, "drain", "organization", "1", "--handler", recv.URL, "--yes", "-o", "json")
	var sum map[string]any
	_ = json.Unmarshal([]byte(out), &sum)
	delete(sum, "seconds")
	delete(sum, "next") // the next step (inspect the shard), checked by nextpath_test.go
	want := map[string]any{"shard": "ORGANIZATION_SCOPE/1", "delivered": 0.0, "deleted": 0.0, "left": "unknown",
		"next_attempt": "unknown", "delay": "unknown", "delivered_not_committed": 1.0}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if code != cmd.ExitError || !reflect.DeepEqual(sum, want) ||
		lines[len(lines)-1] != "Error: "+stallMsg+"; 1 delivered message(s) were not committed and will be delivered again" {
		t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if elapsed > 12*time.Second {
		t.Errorf("it took %s, want the statement timeout plus a few seconds (and the summary's connect timeout)", elapsed)
	}
	if n := countRows(t, schema); n != 3 {
		t.Errorf("%d rows left, want 3: the DELETE never reached the server", n)
	}
}

// TestStalledContextIsGone: under fan-out, a context whose server stopped answering is
// "gone" at its statement deadline and the others print, with no signal needed.
func TestStalledContextIsGone(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	p := testdb.NewProxy(t)
	p.SilenceAfterStartup()
	config := writeConfig(t, 0o600, fmt.Sprintf(`contexts:
  us:
    dsn: %s
    schema: %s
  stalled:
    dsn: %s
    schema: %s
`, testdb.DSN(), c.us, p.DSN(), c.de))
	var code int
	var out, errOut string
	elapsed, _ := testdb.Within(t, 20*time.Second, "fan-out with a silent context", func() error {
		code, out, errOut = runConfig(config, []string{"--context", "us,stalled", "--statement-timeout", "1s", "depth", "-o", "csv"})
		return nil
	})
	if code != cmd.ExitPartial || out != "context,category,category_name,depth\nus,,(total),2\nus,3,ORGANIZATION_MEMBER_UPDATE,2\n" ||
		errOut != "Error: context gone: stalled: "+stallMsg+"\n" {
		t.Errorf("exit %d, want 6\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if elapsed > 11*time.Second {
		t.Errorf("it took %s, want the statement timeout plus a few seconds", elapsed)
	}
}

// TestInterruptDuringStalledStatement: Ctrl-C while the server does not answer exits 130 at
// once (a real process and a real SIGINT), for a read and for a drain, whose commit of what
// was delivered outlives the signal but not the statement deadline.
func TestInterruptDuringStalledStatement(t *testing.T) {
	t.Parallel()
	bin := sharedBinary(t)
	schema := testdb.Schema(t, fixture.Options{})
	seedGroups(t, schema, 3)
	t.Run("depth", func(t *testing.T) {
		t.Parallel()
		p := testdb.NewProxy(t)
		p.SilenceAfterStartup()
		c := exec.Command(bin, "--dsn", p.DSN(), "--schema", schema, "--statement-timeout", "30s", "depth")
		var out, errOut bytes.Buffer
		c.Stdout, c.Stderr = &out, &errOut
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		<-p.SilencedStartup()
		_ = c.Process.Signal(os.Interrupt)
		elapsed, err := testdb.Within(t, 20*time.Second, "depth after SIGINT", c.Wait)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != cmd.ExitInterrupted || out.String() != "" || errOut.String() != "Error: interrupted\n" {
			t.Errorf("exit %v, want 130\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
		}
		if elapsed > 5*time.Second {
			t.Errorf("it took %s after the signal, want at once", elapsed)
		}
	})
	t.Run("drain", func(t *testing.T) {
		t.Parallel()
		p := testdb.NewProxy(t)
		// The process reaches the receiver through a channel: the handler runs on the server's
		// goroutine, and only a channel orders Start's write of c.Process before its read.
		started := make(chan *os.Process, 1)
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			p.Silence()
			proc := <-started
			started <- proc
			_ = proc.Signal(os.Interrupt)
		}))
		t.Cleanup(recv.Close)
		c := exec.Command(bin, "--dsn", p.DSN(), "--schema", schema, "--statement-timeout", "1s", "--connect-timeout", "1s",
			"drain", "organization", "1", "--handler", recv.URL, "--yes", "-o", "json")
		var out, errOut bytes.Buffer
		c.Stdout, c.Stderr = &out, &errOut
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		started <- c.Process
		_, err := testdb.Within(t, 20*time.Second, "drain after SIGINT", c.Wait)
		var ee *exec.ExitError
		lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		if !errors.As(err, &ee) || ee.ExitCode() != cmd.ExitInterrupted || !strings.Contains(out.String(), `"delivered_not_committed": 1`) ||
			lines[len(lines)-1] != "Error: "+stallMsg+"; 1 delivered message(s) were not committed and will be delivered again" {
			t.Errorf("exit %v, want 130\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
		}
	})
}
