package drain

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
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
