package drain

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestHTTPErrorBodyIsRedacted: a receiver whose error body echoes the request (its URL with
// the token in the query, every header) has that body printed with the URL's query values
// and the headers outboxctl sent hidden; the receiver's own words stay. On main the body
// was printed as the receiver sent it.
func TestHTTPErrorBodyIsRedacted(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var names []string
		for k := range r.Header {
			if k != "Accept-Encoding" && k != "Content-Length" {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		var b strings.Builder
		fmt.Fprintf(&b, "rejected %s", r.URL.RequestURI())
		for _, k := range names {
			fmt.Fprintf(&b, " %s: %s;", k, r.Header.Get(k))
		}
		http.Error(w, b.String(), http.StatusForbidden)
	}))
	defer srv.Close()
	env := map[string]string{"TOKEN": "env-s3cret-token", "KEY": "k3y-0f-the-relay"}
	h, err := ParseHandler(HandlerConfig{
		Spec: srv.URL + "/hook?token=qs-s3cret&region=us", Timeout: time.Second,
		Headers: []string{"Authorization: Bearer $TOKEN", "X-Api-Key: $KEY"},
		Getenv:  func(k string) string { return env[k] },
	})
	if err != nil {
		t.Fatal(err)
	}
	err = h.Deliver(context.Background(), Message{ID: 1})
	// The query's name "token" goes too: it is a piece of the header's value
	// (env-s3cret-token), and a piece of a secret is hidden wherever it appears.
	want := "handler " + srv.URL + "/hook?region=xxxxx&token=xxxxx answered 403 Forbidden: " +
		"rejected /hook?xxxxx=xxxxx&region=xxxxx Authorization: xxxxx; Content-Type: application/json; " +
		"User-Agent: outboxctl; X-Api-Key: xxxxx;"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
}
