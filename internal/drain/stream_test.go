package drain

import (
	"bytes"
	"context"
	"encoding/hex"
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

// tokenOf is sh that sets $tok to the token of the document in $l (protocol 2).
const tokenOf = `tok=${l##*\"token\":\"}; tok=${tok%%\"*}; `

// TestStreamDocumentsAndAcks: the co-process receives exactly json.Marshal(NewDocument(m))
// with the protocol version and a fresh 128-bit token at its end, plus a newline, per
// message, one process for all of them, and Close ends its group.
func TestStreamDocumentsAndAcks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, pids := filepath.Join(dir, "in"), filepath.Join(dir, "pid")
	s := streamFor(t, `echo $$ >> `+pids+`; while IFS= read -r l; do printf '%s\n' "$l" >> `+in+`; `+tokenOf+`id=${l#*\"id\":}; printf '{"ok": true, "id": %s, "token": "%s"}\n' "${id%%,*}" "$tok"; done`, 5*time.Second)
	p := `{"a": 1}`
	var want []string
	for i := int64(1); i <= 3; i++ {
		m := Message{ID: 40 + i, Table: "sentry_regionoutbox", Category: 2, CategoryName: "ORGANIZATION_UPDATE", Object: i, Payload: &p}
		if err := s.Deliver(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		doc, _ := json.Marshal(NewDocument(m))
		want = append(want, strings.TrimSuffix(string(doc), "}")+`,"protocol":2,"token":"`)
	}
	pgid := groupOf(t, pids)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(in)
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	tokens := map[string]bool{}
	for i, l := range lines {
		token, ok := strings.CutPrefix(l, want[min(i, len(want)-1)])
		if len(lines) != len(want) || !ok || len(token) != 34 || !strings.HasSuffix(token, `"}`) || tokens[token] {
			t.Fatalf("documents:\n%s\nwant %d lines, each:\n%s<32 hex digits, each token new>\"}", got, len(want), strings.Join(want, "\n"))
		}
		if _, err := hex.DecodeString(token[:32]); err != nil {
			t.Fatalf("token %s: %v", token, err)
		}
		tokens[token] = true
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
	s := streamFor(t, `trap '' TERM INT; echo $$ > `+pids+`; read -r l; `+tokenOf+`echo "{\"id\": 1, \"ok\": true, \"token\": \"$tok\"}"; sleep 60 & while :; do sleep 1; done`, 5*time.Second)
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
	s := streamFor(t, `echo $$ >> `+pids+`; while read -r l; do case "$l" in *'"id":1,'*) printf 'bad \033]0;title\a\n' >&2; echo '{"id": 1, "ok": false, "error": "nope"}';; *) `+tokenOf+`echo "{\"id\": 2, \"ok\": true, \"token\": \"$tok\"}";; esac; done`, 5*time.Second)
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

// TestStreamAckProvesReading: an ack counts only if it echoes the token of the document in
// flight and was written after that document. A co-process that prints acks ahead for
// messages it never read fails the first of them before its document is even written; a
// wrong token and a protocol 1 ack (no token) fail the message in flight, the latter as an
// unavailable handler (nothing acknowledged yet: the drain puts the schedule back).
func TestStreamAckProvesReading(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ahead := func(t *testing.T) {
		in := filepath.Join(dir, "ahead")
		// Reads one document, acks it and the next two at once, then only waits.
		s := streamFor(t, `IFS= read -r l; printf '%s\n' "$l" >> `+in+`; `+tokenOf+
			`printf '{"id": 1, "ok": true, "token": "%s"}\n{"id": 2, "ok": true, "token": "%s"}\n{"id": 3, "ok": true, "token": "%s"}\n' "$tok" "$tok" "$tok"; cat > /dev/null`, 5*time.Second)
		defer s.Close()
		if err := s.Deliver(context.Background(), Message{ID: 1}); err != nil {
			t.Fatalf("message 1: %v", err)
		}
		err := s.Deliver(context.Background(), Message{ID: 2})
		want := `handler stream:` + s.Command + ` broke the stream protocol: it wrote "{\"id\": 2, \"ok\": true, \"token\": \"`
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), `\"}" on stdout before the document of message 2 was written, and no ack can come before its document (one ack line per document read, nothing else on stdout)`) {
			t.Fatalf("message 2: %v\nwant %s…", err, want)
		}
		if b, _ := os.ReadFile(in); strings.Count(string(b), "\n") != 1 {
			t.Fatalf("the co-process received %d documents, want 1 (message 2 must not be written):\n%s", strings.Count(string(b), "\n"), b)
		}
	}
	t.Run("ahead", ahead)
	for _, tc := range []struct {
		name, ack, want string
		unavailable     bool
	}{
		{"wrong-token", `{"id": 1, "ok": true, "token": "0123456789abcdef0123456789abcdef"}`,
			"broke the stream protocol: acknowledged message 1 with a token that is not the one its document carried (an ack must echo the token of the document it answers)", false},
		{"protocol-1", `{"id": 1, "ok": true}`,
			`acknowledged message 1 without the document's token: it speaks stream protocol 1; update it to protocol 2, whose ack echoes each document's "token" (docs/handlers/README.md)`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := streamFor(t, `while IFS= read -r l; do echo '`+tc.ack+`'; done`, 5*time.Second)
			defer s.Close()
			err := s.Deliver(context.Background(), Message{ID: 1})
			if err == nil || err.Error() != "handler stream:"+s.Command+" "+tc.want || errors.Is(err, ErrHandlerUnavailable) != tc.unavailable {
				t.Fatalf("error: %v (unavailable: %v)\nwant:  handler stream:%s %s (unavailable: %v)", err, errors.Is(err, ErrHandlerUnavailable), s.Command, tc.want, tc.unavailable)
			}
		})
	}
}
