package render

import (
	"strings"
	"testing"
	"time"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestColorPolicy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		tty    bool
		env    []string
		noFlag bool
		want   bool
	}{
		{"TTY", true, nil, false, true},
		{"Pipe", false, nil, false, false},
		{"NoColor", true, []string{"NO_COLOR", "1"}, false, false},
		{"NoColorAnyValue", true, []string{"NO_COLOR", "0"}, false, false},
		{"CliColor0", true, []string{"CLICOLOR", "0"}, false, false},
		{"Force", false, []string{"CLICOLOR_FORCE", "1"}, false, true},
		{"ForceZero", false, []string{"CLICOLOR_FORCE", "0"}, false, false},
		{"FlagWins", true, []string{"CLICOLOR_FORCE", "1"}, true, false},
	} {
		s := &Streams{OutTTY: tt.tty, Getenv: env(tt.env...)}
		if got := s.ColorEnabled(tt.noFlag); got != tt.want {
			t.Errorf("%s: ColorEnabled = %v, want %v", tt.name, got, tt.want)
		}
	}
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) //nolint:gochecknoglobals // test clock

func sample() Doc {
	return Doc{{Name: "shards", Title: "Shards", Table: &Table{
		Columns:     []string{"shard_scope", "scope", "shard_identifier", "next_attempt", "payload"},
		Labels:      map[string]string{"shard_identifier": "shard"},
		MachineOnly: map[string]bool{"shard_scope": true},
		Rows: [][]any{
			{int64(0), "ORGANIZATION_SCOPE", int64(42), now.Add(-90 * time.Second), `{"a": "tab	and
newline"}`},
			{int64(1), Styled{"USER_SCOPE", ToneWarn}, int64(5), now.Add(time.Hour), nil},
		},
	}}}
}

func print(t *testing.T, f Format, tty bool, doc Doc) string {
	t.Helper()
	s, out, _ := Test()
	s.OutTTY = tty
	p := NewPrinter(s, f, false)
	p.Now = func() time.Time { return now }
	if err := p.Print(doc); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestFormats(t *testing.T) {
	t.Parallel()
	js := print(t, FormatJSON, true, sample())
	for _, want := range []string{`"shard_scope": 0`, `"scope": "ORGANIZATION_SCOPE"`, `"next_attempt": "2026-11-30T11:58:30Z"`, `"payload": null`, `"scope": "USER_SCOPE"`} {
		if !strings.Contains(js, want) {
			t.Errorf("json lacks %s:\n%s", want, js)
		}
	}
	if strings.Contains(js, "\x1b[") {
		t.Error("json carries colour")
	}
	if strings.Index(js, `"shard_scope"`) > strings.Index(js, `"scope"`) {
		t.Error("json keys are not in column order")
	}

	jl := print(t, FormatJSONL, false, sample())
	if lines := strings.Split(strings.TrimSpace(jl), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], `{"shard_scope":0,`) {
		t.Errorf("jsonl:\n%s", jl)
	}

	csv := print(t, FormatCSV, false, sample())
	if !strings.HasPrefix(csv, "shard_scope,scope,shard_identifier,next_attempt,payload\n0,ORGANIZATION_SCOPE,42,2026-11-30T11:58:30Z,") {
		t.Errorf("csv:\n%s", csv)
	}

	tsv := print(t, FormatAuto, false, sample())
	wantTSV := "shard_scope\tscope\tshard_identifier\tnext_attempt\tpayload\n0\tORGANIZATION_SCOPE\t42\t2026-11-30T11:58:30Z\t{\"a\": \"tab\\tand\\nnewline\"}\n1\tUSER_SCOPE\t5\t2026-11-30T13:00:00Z\t\n"
	if tsv != wantTSV {
		t.Errorf("plain output:\n%q\nwant\n%q", tsv, wantTSV)
	}

	tty := print(t, FormatAuto, true, sample())
	for _, want := range []string{"SCOPE", "SHARD", "1m30s ago", "in 1h", "ORGANIZATION_SCOPE"} {
		if !strings.Contains(tty, want) {
			t.Errorf("terminal table lacks %q:\n%s", want, tty)
		}
	}
	if strings.Contains(tty, "SHARD SCOPE") {
		t.Errorf("machine-only column shown on a terminal:\n%s", tty)
	}

	md := print(t, FormatMarkdown, false, sample())
	if !strings.Contains(md, "| scope") || !strings.Contains(md, "### Shards") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestColorOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	s, out, _ := Test()
	s.OutTTY = true
	s.Getenv = env("CLICOLOR_FORCE", "1")
	p := NewPrinter(s, FormatAuto, false)
	if err := p.Print(sample()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\x1b[") {
		t.Errorf("CLICOLOR_FORCE gave no colour:\n%q", out.String())
	}
	s2, out2, _ := Test()
	s2.OutTTY = true
	s2.Getenv = env("CLICOLOR_FORCE", "1", "NO_COLOR", "1")
	if err := NewPrinter(s2, FormatAuto, false).Print(sample()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out2.String(), "\x1b[") {
		t.Error("NO_COLOR ignored")
	}
}

func TestMultiSectionJSONIsOneObject(t *testing.T) {
	t.Parallel()
	doc := Doc{
		{Name: "shard", Card: []Field{{Key: "depth", Value: int64(3)}}},
		{Name: "messages", Table: &Table{Columns: []string{"id"}, Rows: [][]any{{int64(1)}}}},
	}
	js := print(t, FormatJSON, false, doc)
	if !strings.HasPrefix(js, "{\n  \"shard\": {\n    \"depth\": 3\n  },\n  \"messages\": [") {
		t.Errorf("json:\n%s", js)
	}
	jl := print(t, FormatJSONL, false, doc)
	if !strings.Contains(jl, `{"section":"messages","id":1}`) {
		t.Errorf("jsonl:\n%s", jl)
	}
}

func TestDocStreamWritesRowsAsTheyCome(t *testing.T) {
	t.Parallel()
	for _, f := range []Format{FormatJSONL, FormatCSV, FormatJSON} {
		s, out, _ := Test()
		p := NewPrinter(s, f, false)
		d := p.StartDoc(Doc{{Name: "shard", Card: []Field{{Key: "depth", Value: int64(2)}}}},
			Section{Name: "messages", Table: &Table{HumanOnly: map[string]bool{"detail": true}}})
		if err := d.Columns([]string{"id", "detail"}); err != nil {
			t.Fatal(err)
		}
		before := out.Len()
		if err := d.Row([]any{int64(1), "for people"}); err != nil {
			t.Fatal(err)
		}
		if f != FormatCSV && out.Len() == before {
			t.Fatalf("%s: row not written at once", f)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "for people") {
			t.Fatalf("%s: a human-only column reached machine output:\n%s", f, out)
		}
		if f == FormatJSON && !strings.Contains(out.String(), `"messages": [`) {
			t.Fatalf("json stream:\n%s", out)
		}
	}
}

func TestRelative(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		t    time.Time
		want string
	}{
		{now.Add(-3 * time.Second), "3s ago"},
		{now.Add(2 * time.Hour), "in 2h"},
		{now.Add(-72 * time.Hour), "3d ago"},
		{time.Date(2016, 8, 1, 0, 0, 0, 0, time.UTC), "never attempted"},
	} {
		if got := Relative(tt.t, now); got != tt.want {
			t.Errorf("Relative(%v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	t.Parallel()
	if f, err := ParseFormat("JSON"); err != nil || f != FormatJSON {
		t.Fatal(f, err)
	}
	if _, err := ParseFormat("yaml"); err == nil || !strings.Contains(err.Error(), "table, wide, json, jsonl, csv, markdown") {
		t.Fatal(err)
	}
}
