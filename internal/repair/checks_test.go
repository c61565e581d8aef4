package repair

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func parseID(s, _ string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

func TestMessageIDsRefuseARepeat(t *testing.T) {
	t.Parallel()
	ids, err := MessageIDs([]string{"3", "1"}, parseID)
	if err != nil || len(ids) != 2 || ids[0] != 3 {
		t.Fatalf("%v %v", ids, err)
	}
	var r *Refused
	if _, err := MessageIDs([]string{"3", "3"}, parseID); !errors.As(err, &r) || r.Msg != "message 3 is named twice" {
		t.Fatalf("a repeat: %v", err)
	}
	refs, err := ShardRefs(1, []string{"4", "2", "4"}, "", parseID)
	if err != nil || len(refs) != 2 || refs[1].ID != 2 {
		t.Fatalf("shard refs %v %v", refs, err)
	}
}

func TestDrainFlagsCheck(t *testing.T) {
	t.Parallel()
	ok := DrainFlags{HandlerTimeout: time.Second}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []DrainFlags{{HandlerTimeout: time.Second, MaxMessages: -1}, {HandlerTimeout: time.Second, Rate: -1}, {}} {
		var r *Refused
		if err := f.Check(); !errors.As(err, &r) {
			t.Errorf("%+v: %v, want a refusal", f, err)
		}
	}
	if err := (DrainFlags{}).NeedHandler("try"); err == nil {
		t.Fatal("no handler and no dry run: want a refusal")
	}
	if err := (DrainFlags{DryRun: true}).NeedHandler("try"); err != nil {
		t.Fatal(err)
	}
}

func TestTargetLineSaysWhichSourceNamedTheDatabase(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OUTBOXCTL_DSN": "postgres://u:secret@h:5432/d", "PGHOST": "x"}
	l := TargetLine{Table: "sentry_regionoutbox", Getenv: func(k string) string { return env[k] }}
	got := l.String()
	if want := "target: database u@h:5432/d (from env OUTBOXCTL_DSN), schema (search_path), table sentry_regionoutbox"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := (TargetLine{}).String(); !strings.HasSuffix(got, " (from nothing: libpq's defaults), schema (search_path)") {
		t.Fatalf("no source: %q", got)
	}
}
