package render

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestFormatTime(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		t    time.Time
		mode TimeMode
		want string
	}{
		{now, TimeRelative, "0s ago"},
		{now.Add(-400 * time.Millisecond), TimeRelative, "0s ago"},
		{now.Add(-3 * time.Minute), TimeRelative, "3m ago"},
		{now.Add(-54*time.Minute - 11*time.Second), TimeRelative, "54m11s ago"},
		{now.Add(-47*time.Hour - 57*time.Minute - 13*time.Second), TimeRelative, "1d23h ago"},
		{now.Add(-52 * time.Hour), TimeRelative, "2d4h ago"},
		{now.Add(-400 * 24 * time.Hour), TimeRelative, "400d ago"},
		{now.Add(5 * time.Minute), TimeRelative, "in 5m"},
		{now.Add(-54*time.Minute - 11*time.Second), TimeAbsolute, "2026-11-30 11:05:49Z"},
		{now.In(time.FixedZone("CET", 3600)), TimeAbsolute, "2026-11-30 12:00:00Z"},
		{thePast, TimeRelative, "never attempted"},
		{thePast, TimeAbsolute, "never attempted"},
		{time.Time{}, TimeRelative, ""},
	} {
		if got := FormatTime(tt.t, now, tt.mode); got != tt.want {
			t.Errorf("FormatTime(%v, %d) = %q, want %q", tt.t, tt.mode, got, tt.want)
		}
	}
}

func TestFormatDue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		t    time.Time
		mode TimeMode
		want string
	}{
		{now, TimeRelative, "due now"},
		{now.Add(-time.Hour), TimeAbsolute, "due now"},
		{now.Add(90 * time.Second), TimeRelative, "in 1m30s"},
		{now.Add(90 * time.Second), TimeAbsolute, "2026-11-30 12:01:30Z"},
		{thePast, TimeRelative, "never attempted"},
	} {
		if got := FormatDue(tt.t, now, tt.mode); got != tt.want {
			t.Errorf("FormatDue(%v, %d) = %q, want %q", tt.t, tt.mode, got, tt.want)
		}
	}
}

func TestPercent(t *testing.T) {
	t.Parallel()
	for f, want := range map[float64]string{0.308: "30.8%", 1: "100.0%", 0: "0.0%", 0.00049: "0.0%", math.NaN(): ""} {
		if got := Percent(f); got != want {
			t.Errorf("Percent(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestParseTimeMode(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]TimeMode{"": TimeRelative, "relative": TimeRelative, "ABSOLUTE": TimeAbsolute, "utc": TimeAbsolute} {
		if got, err := ParseTimeMode(s); err != nil || got != want {
			t.Errorf("ParseTimeMode(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseTimeMode("local"); err == nil || err.Error() != `invalid time format "local": valid values are relative, absolute` {
		t.Errorf("err = %v", err)
	}
}

// TestDueAndRatioKeepMachineOutput: a Due time and a Ratio read as "due now" and "30.8%" on
// a terminal while JSON and tab-separated output keep the time and the number.
func TestDueAndRatioKeepMachineOutput(t *testing.T) {
	t.Parallel()
	doc := func() Doc {
		return Doc{{Name: "b", Table: &Table{Columns: []string{"next", "progress"}, Rows: [][]any{{Due(now.Add(-time.Second)), Ratio(0.308)}}}}}
	}
	js, _ := printWith(t, FormatJSON, false, 0, HeadersAuto, doc())
	if !strings.Contains(js, `"next": "2026-11-30T11:59:59Z"`) || !strings.Contains(js, `"progress": 0.308`) {
		t.Errorf("json:\n%s", js)
	}
	tsv, _ := printWith(t, FormatAuto, false, 0, HeadersAuto, doc())
	if tsv != "next\tprogress\n2026-11-30T11:59:59Z\t0.308\n" {
		t.Errorf("tsv %q", tsv)
	}
	tty, _ := printWith(t, FormatAuto, true, 0, HeadersAuto, doc())
	if !strings.Contains(tty, "due now  30.8%") {
		t.Errorf("tty %q", tty)
	}
	s, out, _ := Test()
	s.OutTTY = true
	p := NewPrinter(s, FormatAuto, true)
	p.Now = func() time.Time { return now }
	p.Time = TimeAbsolute
	if err := p.Print(Doc{{Card: []Field{{Key: "oldest", Value: now.Add(-time.Hour)}}}}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "oldest  2026-11-30 11:00:00Z\n" {
		t.Errorf("absolute card %q", out)
	}
}

// TestJSONTextNestsValidJSON: a payload that is valid JSON is nested in JSON output, one
// that is not stays a string; tab-separated output shows the text either way.
func TestJSONTextNestsValidJSON(t *testing.T) {
	t.Parallel()
	doc := func() Doc {
		return Doc{{Name: "m", Table: &Table{Columns: []string{"id", "payload"},
			Rows: [][]any{{int64(1), JSONText(`{"a": [1, "x"]}`)}, {int64(2), JSONText(`not {json`)}}}}}
	}
	js, _ := printWith(t, FormatJSONL, false, 0, HeadersAuto, doc())
	if js != "{\"id\":1,\"payload\":{\"a\":[1,\"x\"]}}\n{\"id\":2,\"payload\":\"not {json\"}\n" {
		t.Errorf("jsonl %q", js)
	}
	tsv, _ := printWith(t, FormatAuto, false, 0, HeadersAuto, doc())
	if tsv != "id\tpayload\n1\t{\"a\": [1, \"x\"]}\n2\tnot {json\n" {
		t.Errorf("tsv %q", tsv)
	}
}
