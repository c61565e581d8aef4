package repair

import (
	"errors"
	"testing"

	"github.com/outboxctl/outboxctl/internal/drain"
)

// TestCheckResume: a resume that contradicts its journal (--keep-backoff added, another
// --archive) is refused with its Try, and one that agrees takes the run's flags.
func TestCheckResume(t *testing.T) {
	t.Parallel()
	run := &drain.BulkResume{BulkJournalHeader: drain.BulkJournalHeader{Op: "op1", Archive: "/a.jsonl", KeepBackoff: false}}
	none := func(map[string]bool) string { return "" }
	for _, tc := range []struct {
		name    string
		b       Bulk
		without func(map[string]bool) string
		msg     string
		try     string
	}{
		{"keep-backoff added", Bulk{Command: "skip", KeepBackoff: true, Resume: run}, none,
			"operation op1 ran without --keep-backoff (its shards whose head row it removed were made due now): resume it without --keep-backoff",
			"outboxctl skip --resume op1"},
		{"another archive", Bulk{Command: "compact", Archive: "/b.jsonl", Resume: run},
			func(drop map[string]bool) string {
				if !drop["archive"] {
					return "" // the Try of another refusal
				}
				return "outboxctl compact --resume op1 --yes"
			},
			"operation op1 archives to /a.jsonl, its own file: a resume goes on writing there, so it takes no other --archive (/b.jsonl)",
			"outboxctl compact --resume op1 --yes"},
		{"the run's own", Bulk{Command: "skip", Archive: "/a.jsonl", Resume: run}, none, "", ""},
		{"no resume", Bulk{Command: "skip", KeepBackoff: true, Archive: "/b.jsonl"}, none, "", ""},
	} {
		err := tc.b.CheckResume(tc.without)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var r *Refused
		if !errors.As(err, &r) || r.Msg != tc.msg || r.Try != tc.try || !r.UsageError() {
			t.Errorf("%s: got %#v, want %q with Try %q", tc.name, err, tc.msg, tc.try)
		}
	}
}

// TestCheckResumeTarget: a resume on another database or table is refused, its Try naming
// the run's own schema (none for a run on the search_path).
func TestCheckResumeTarget(t *testing.T) {
	t.Parallel()
	b := Bulk{Command: "reschedule", Where: "db", Resume: &drain.BulkResume{BulkJournalHeader: drain.BulkJournalHeader{Op: "op2", Target: "elsewhere", Schema: "s1"}}}
	var r *Refused
	if err := b.CheckResumeTarget(); !errors.As(err, &r) || r.Try != "outboxctl --schema s1 reschedule --resume op2" {
		t.Fatalf("got %#v", err)
	}
	b.Resume.Schema = ""
	if err := b.CheckResumeTarget(); !errors.As(err, &r) || r.Try != "" {
		t.Fatalf("a run on the search_path: got %#v", err)
	}
	b.Resume.Target = b.Where + ", " + b.Target.Describe()
	if err := b.CheckResumeTarget(); err != nil {
		t.Fatalf("the run's own target: %v", err)
	}
}
