package drain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// streamFor parses a stream: handler whose co-process is the given shell script.
func streamFor(t *testing.T, script string, timeout time.Duration) *Stream {
	t.Helper()
	h, err := ParseHandler(HandlerConfig{Spec: "stream:" + script, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := h.(*Stream)
	if !ok {
		t.Fatalf("ParseHandler gave %T", h)
	}
	if _, ok := h.(io.Closer); !ok {
		t.Fatal("a stream handler must be an io.Closer: the command closes it on every exit path")
	}
	return s
}

// groupOf reads the process group a co-process wrote to its pid file.
func groupOf(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if n, cerr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && cerr == nil && n > 1 {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("no group id in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still running", pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStreamDocumentsAndAcks: the co-process receives exactly json.Marshal(NewDocument(m))
// plus a newline per message, one process for all of them, and Close ends its group.
func TestStreamDocumentsAndAcks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, pids := filepath.Join(dir, "in"), filepath.Join(dir, "pid")
	s := streamFor(t, `echo $$ >> `+pids+`; while IFS= read -r l; do printf '%s\n' "$l" >> `+in+`; id=${l#*\"id\":}; printf '{"ok": true, "id": %s}\n' "${id%%,*}"; done`, 5*time.Second)
	p := `{"a": 1}`
	var want bytes.Buffer
	for i := int64(1); i <= 3; i++ {
		m := Message{ID: 40 + i, Table: "sentry_regionoutbox", Category: 2, CategoryName: "ORGANIZATION_UPDATE", Object: i, Payload: &p}
		if err := s.Deliver(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		doc, _ := json.Marshal(NewDocument(m))
		want.Write(append(doc, '\n'))
	}
	pgid := groupOf(t, pids)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(in)
	if string(got) != want.String() {
		t.Fatalf("documents:\n%s\nwant:\n%s", got, want.String())
	}
	if b, _ := os.ReadFile(pids); strings.Count(string(b), "\n") != 1 {
		t.Fatalf("started %d co-processes, want 1", strings.Count(string(b), "\n"))
	}
	waitGroupGone(t, pgid)
}

// TestStreamCloseKillsStubbornGroup: a co-process that ignores stdin EOF and SIGTERM, with a
// child of its own, is killed with its whole group after the grace period.
func TestStreamCloseKillsStubbornGroup(t *testing.T) {
	t.Parallel()
	pids := filepath.Join(t.TempDir(), "pid")
	s := streamFor(t, `trap '' TERM INT; echo $$ > `+pids+`; read -r l; echo '{"id": 1, "ok": true}'; sleep 60 & while :; do sleep 1; done`, 5*time.Second)
	s.Grace = 200 * time.Millisecond
	if err := s.Deliver(context.Background(), Message{ID: 1}); err != nil {
		t.Fatal(err)
	}
	pgid := groupOf(t, pids)
	start := time.Now()
	_ = s.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %s", d)
	}
	waitGroupGone(t, pgid)
}

// TestStreamFailureRestarts: after a negative ack the co-process is closed (a late line can
// never pass for the next message's ack); the next delivery starts a fresh one. Its stderr
// reaches ours escaped, and its end is in the error.
func TestStreamFailureRestarts(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	dir := t.TempDir()
	pids := filepath.Join(dir, "pid")
	s := streamFor(t, `echo $$ >> `+pids+`; while read -r l; do case "$l" in *'"id":1,'*) printf 'bad \033]0;title\a\n' >&2; echo '{"id": 1, "ok": false, "error": "nope"}';; *) echo '{"id": 2, "ok": true}';; esac; done`, 5*time.Second)
	s.Stderr = &stderr
	err := s.Deliver(context.Background(), Message{ID: 1})
	if err == nil || err.Error() != "handler stream:"+s.Command+" refused it: nope" || errors.Is(err, ErrHandlerUnavailable) {
		t.Fatalf("error: %v", err)
	}
	if err := s.Deliver(context.Background(), Message{ID: 2}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if b, _ := os.ReadFile(pids); strings.Count(string(b), "\n") != 2 {
		t.Fatalf("started %d co-processes, want 2", strings.Count(string(b), "\n"))
	}
	if got := stderr.String(); got != "bad \\x1b]0;title\\x07\n" {
		t.Fatalf("relayed stderr %q", got)
	}
}

// TestStreamParse: the forms ParseHandler refuses.
func TestStreamParse(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]string{
		"stream:  ": "invalid `--handler` \"stream:  \": stream: needs a command, e.g. stream:'sentry exec docs/handlers/sentry_deliver.py'",
	} {
		if _, err := ParseHandler(HandlerConfig{Spec: spec}); err == nil || err.Error() != want {
			t.Errorf("%q: %v", spec, err)
		}
	}
	if _, err := ParseHandler(HandlerConfig{Spec: "stream:cat", Headers: []string{"A: b"}}); err == nil || err.Error() != "`--handler-header` goes with an http(s):// handler" {
		t.Errorf("header: %v", err)
	}
	if err := (&Stream{Command: "/nonexistent/x --y"}).Preflight(context.Background()); !errors.Is(err, ErrHandlerUnavailable) {
		t.Errorf("preflight: %v", err)
	}
}
