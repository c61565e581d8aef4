package mailbox

import (
	"testing"
	"time"
)

// TestRedact: exact redacted forms of the shapes a webhook request takes.
func TestRedact(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, got, want string
	}{
		{"headers keep order, hide secrets", RedactHeaders(`{"Content-Type":"application/json","X-Hub-Signature-256":"sha256=ab","Authorization":"Basic x","Cookie":"a=b","X-GitHub-Event":"check_suite"}`),
			`{"Content-Type":"application/json","X-Hub-Signature-256":"[redacted]","Authorization":"[redacted]","Cookie":"[redacted]","X-GitHub-Event":"check_suite"}`},
		{"headers not an object", RedactHeaders(`Authorization: Bearer abc`), `[25 bytes of headers that are not a JSON object, hidden: --show-secrets shows them]`},
		{"headers with trailing data", RedactHeaders(`{"a":"b"} {"Authorization":"x"}`), `[31 bytes of headers that are not a JSON object, hidden: --show-secrets shows them]`},
		{"json body at depth, author kept", RedactBody(`{"author":"octocat","installation":{"id":1,"access_token":"t0k","nested":[{"client_secret":{"k":"v"}}]},"n":1.50,"ok":true,"x":null}`),
			`{"author":"octocat","installation":{"id":1,"access_token":"[redacted]","nested":[{"client_secret":"[redacted]"}]},"n":1.50,"ok":true,"x":null}`},
		{"json string holding json", RedactBody(`{"payload":"{\"token\":\"abc\"}"}`), `{"payload":"{\"token\":\"[redacted]\"}"}`},
		{"form with a json field", RedactBody(`token=xyz&team_id=T1&payload=%7B%22password%22%3A%22p%22%7D`),
			`token=%5Bredacted%5D&team_id=T1&payload=%7B%22password%22%3A%22%5Bredacted%5D%22%7D`},
		{"plain text with a github token", RedactBody("hello ghp_abcdefghijklmnopqrstuvwxyz012345 bye"), "hello [redacted] bye"},
		{"path query", RedactPath("/extensions/jira/issue-updated/?jwt=eyJhbGciOi.eyJzdWIiOi.sig&x=1"), "/extensions/jira/issue-updated/?jwt=%5Bredacted%5D&x=1"},
		{"path without query", RedactPath("/extensions/github/webhook/"), "/extensions/github/webhook/"},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, c.got, c.want)
		}
	}
	if r := RedactRequest("POST", "/?token=abc", `{"Authorization":"x"}`, "token=y", true); r.Redacted || r.Path != "/?token=abc" || r.Headers != `{"Authorization":"x"}` || r.Body != "token=y" {
		t.Errorf("--show-secrets changed the request: %+v", r)
	}
}

// TestBackoff: 3 × 1.4^attempts minutes, capped at an hour (reference §10.4).
func TestBackoff(t *testing.T) {
	t.Parallel()
	for attempts, want := range map[int]time.Duration{0: 3 * time.Minute, 1: 252 * time.Second, 2: 352800 * time.Millisecond, 9: time.Hour, 10: time.Hour} {
		if got := Backoff(attempts).Round(time.Millisecond); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", attempts, got, want)
		}
	}
}

// TestDepthByEstimate: depth --table hybridcloud_webhookpayload counts a table of up to
// ExactDepthRows payloads, estimates a larger one unless --exact, and estimates any with
// --estimate; a table the catalog has no estimate for is counted.
func TestDepthByEstimate(t *testing.T) {
	t.Parallel()
	cat := func(rows int64) Catalog { c := Catalog{}; c.EstimatedRows = &rows; return c }
	for _, tt := range []struct {
		cat             Catalog
		estimate, exact bool
		want            bool
	}{
		{cat(ExactDepthRows), false, false, false},
		{cat(ExactDepthRows + 1), false, false, true},
		{cat(20_000_000), false, true, false},
		{cat(10), true, false, true},
		{Catalog{}, false, false, false},
	} {
		if got := DepthByEstimate(tt.cat, tt.estimate, tt.exact); got != tt.want {
			t.Errorf("DepthByEstimate(%v rows, estimate %v, exact %v) = %v, want %v", tt.cat.EstimatedRows, tt.estimate, tt.exact, got, tt.want)
		}
	}
}
