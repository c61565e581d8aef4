package drain

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestHTTPHandler(t *testing.T) {
	t.Parallel()
	var got Document
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &got)
		if got.Object == 13 {
			http.Error(w, "no such object", http.StatusUnprocessableEntity)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	p := `{"a": 1}`
	h, err := ParseHandler(HandlerConfig{Spec: srv.URL + "/hook", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m := Message{ID: 9, Table: "sentry_regionoutbox", Category: 2, CategoryName: "ORGANIZATION_UPDATE", Object: 42, Payload: &p}
	if err := h.Deliver(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if got.ID != 9 || got.CategoryName != "ORGANIZATION_UPDATE" || string(got.Payload) != `{"a":1}` || len(got.Coalesced) != 1 {
		t.Fatalf("document: %+v", got)
	}
	m.Object = 13
	if err := h.Deliver(context.Background(), m); err == nil || !strings.Contains(err.Error(), "422") || !strings.Contains(err.Error(), "no such object") {
		t.Fatalf("a 422 gave %v", err)
	}
}

func TestExecHandlerTimeoutAndStderr(t *testing.T) {
	t.Parallel()
	h, err := ParseHandler(HandlerConfig{Spec: "exec:sleep 5", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := h.Deliver(context.Background(), Message{}); err == nil || !strings.Contains(err.Error(), "timed out") || time.Since(start) > 3*time.Second {
		t.Fatalf("timeout: %v after %s", err, time.Since(start))
	}
	h, _ = ParseHandler(HandlerConfig{Spec: "exec:cat >/dev/null; echo crashed >&2; exit 2", Timeout: time.Second})
	if err := h.Deliver(context.Background(), Message{}); err == nil || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("stderr not in error: %v", err)
	}
	for _, bad := range []string{"", "exec:", "ftp://x", "sh"} {
		if _, err := ParseHandler(HandlerConfig{Spec: bad, Timeout: time.Second}); err == nil {
			t.Errorf("handler %q accepted", bad)
		}
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://user:pw@relay/hook":                  "https://xxxxx@relay/hook",
		"https://relay/hook?a=b@c":                    "https://relay/hook?a=xxxxx",
		"https://relay/x?token=s3cr3t&region=us#frag": "https://relay/x?region=xxxxx&token=xxxxx",
		"https://u:pw@relay:8443/x?api_key=k":         "https://xxxxx@relay:8443/x?api_key=xxxxx",
		"http://relay":                                "http://relay",
		"discard":                                     "discard",
		"exec:./x.sh":                                 "exec:./x.sh",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFirstCommandWord(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]string{
		`./deliver.sh --region us`:       "./deliver.sh",
		`"/tmp/my dir/h.sh" x`:           "/tmp/my dir/h.sh",
		`'/tmp/my dir/h.sh'`:             "/tmp/my dir/h.sh",
		`TOKEN='a b' /bin/cat`:           "/bin/cat",
		`A=1 B="x y" python3 handler.py`: "python3",
		`my\ cmd arg`:                    "my cmd",
		`'A=b' cmd`:                      "A=b",
	} {
		if got, ok := firstCommandWord(line); !ok || got != want {
			t.Errorf("firstCommandWord(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
	for _, line := range []string{`$HANDLER x`, "`which x`", `a|b`, `"unclosed`, `a; b`} {
		if got, ok := firstCommandWord(line); ok {
			t.Errorf("firstCommandWord(%q) = %q, ok; want left to the shell", line, got)
		}
	}
}

func TestHTTPRedirectIsNotDelivery(t *testing.T) {
	t.Parallel()
	var posted atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusFound)
			return
		}
		posted.Add(1)
	}))
	defer srv.Close()
	h, err := ParseHandler(HandlerConfig{Spec: srv.URL + "/old", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Deliver(context.Background(), Message{ID: 1}); err == nil || !strings.Contains(err.Error(), "answered 302 Found") {
		t.Fatalf("a redirect counted as delivered: %v", err)
	}
	if posted.Load() != 0 {
		t.Fatal("the redirect was followed")
	}
}

// TestDocumentKeys pins the handler document's JSON keys: handlers in the field parse them.
func TestDocumentKeys(t *testing.T) {
	t.Parallel()
	p := `not json`
	b, err := json.Marshal(NewDocument(Message{ID: 5, Table: "sentry_controloutbox", Silo: "control", Cell: "us", Scope: 1, ScopeName: "USER_SCOPE",
		Shard: 7, Category: 4, CategoryName: "USER_UPDATE", Object: 7, Payload: &p}))
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	want := []string{"category", "category_name", "cell", "coalesced_count", "coalesced_ids", "date_added", "id", "object_identifier",
		"payload", "scheduled_for", "shard_identifier", "shard_scope", "shard_scope_name", "silo", "table"}
	got := make([]string, 0, len(keys))
	for k := range keys {
		got = append(got, k)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") || string(keys["payload"]) != `"not json"` || string(keys["coalesced_ids"]) != "[5]" {
		t.Fatalf("document keys %v, payload %s, coalesced %s", got, keys["payload"], keys["coalesced_ids"])
	}
}

// TestExecStrayChildIsDelivered: a handler that exits 0 but leaves a child holding its
// stderr (and stdout) has delivered: no error, one warning, and no wait for the child
// (the original main waited WaitDelay and reported "WaitDelay expired", an outage).
func TestExecStrayChildIsDelivered(t *testing.T) {
	t.Parallel()
	pids := filepath.Join(t.TempDir(), "pgid")
	h, err := ParseHandler(HandlerConfig{Spec: "exec:cat >/dev/null; echo $$ >> " + pids + "; sleep 30 & exit 0", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	h.(*Exec).Stderr = &stderr
	start := time.Now()
	err = h.Deliver(context.Background(), Message{ID: 7})
	pgid := groupOf(t, pids)
	defer syscall.Kill(-pgid, syscall.SIGKILL) //nolint:errcheck // the stray child, if still there
	if err != nil {
		t.Fatalf("a handler that exited 0 failed: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the delivery waited %s for the stray child", d)
	}
	want := "warning: handler " + h.(*Exec).Command + " exited 0 for message 7 but left a process holding its stderr: the message counts as delivered; that process's output is no longer read\n"
	if stderr.String() != want {
		t.Fatalf("stderr %q\nwant   %q", stderr.String(), want)
	}
}

// TestExecStderrTail: a failing handler's error carries the end of its stderr, after a
// 70,000-byte line (the original main kept the first 500 bytes: the long line's start): the
// last 500 runes, the end of the long line and the last line.
func TestExecStderrTail(t *testing.T) {
	t.Parallel()
	command := `cat >/dev/null; head -c 70000 /dev/zero | tr '\0' x >&2; echo >&2; echo 'last words' >&2; exit 3`
	h, err := ParseHandler(HandlerConfig{Spec: "exec:" + command, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = h.Deliver(context.Background(), Message{ID: 7})
	if want := "handler " + command + ": exit status 3: …" + strings.Repeat("x", 488) + " last words"; err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant  %s", err, want)
	}
}

// TestStreamLongStderrLine: a 70,000-byte stderr line is relayed cut and marked and the
// co-process lives on to acknowledge (the original main's relay stopped at 64 KiB, and the
// co-process died of SIGPIPE at its next stderr write).
func TestStreamLongStderrLine(t *testing.T) {
	t.Parallel()
	s := streamFor(t, `while IFS= read -r l; do head -c 70000 /dev/zero | tr '\0' y >&2; echo >&2; echo after >&2; `+tokenOf+
		`echo "{\"id\": 1, \"ok\": true, \"token\": \"$tok\"}"; done`, 10*time.Second)
	var stderr bytes.Buffer
	s.Stderr = &stderr
	defer s.Close()
	if err := s.Deliver(context.Background(), Message{ID: 1}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close() // the relay's last lines are in once the co-process is gone
	if want := strings.Repeat("y", 4096) + " …[line cut: 70000 bytes, the first 4096 shown]\nafter\n"; stderr.String() != want {
		t.Fatalf("relayed %d bytes: %.80q…%q", stderr.Len(), stderr.String(), stderr.String()[max(0, stderr.Len()-80):])
	}
}
