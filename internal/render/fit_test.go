package render

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// stuck is a stuck-shards table as wide as the real one: the scope and shard identify a
// row and are never dropped; the rest have priorities.
func stuck() Doc {
	t := &Table{
		Columns: []string{"scope", "shard_identifier", "state", "depth", "oldest", "next_attempt", "attempts", "categories", "last_error"},
		Labels:  map[string]string{"shard_identifier": "shard"},
		Priority: map[string]int{
			"state": 90, "depth": 80, "oldest": 70, "next_attempt": 60, "attempts": 30, "categories": 20, "last_error": 10,
		},
		Rows: [][]any{
			{"ORGANIZATION_SCOPE", int64(4242), Styled{"backing off", ToneWarn}, int64(7), now.Add(-54*time.Minute - 11*time.Second), Due(now.Add(4 * time.Minute)), int64(12), "ORGANIZATION_UPDATE,ORGANIZATION_MEMBER_UPDATE", "HTTPSConnectionPool(host='us.sentry.io', port=443): Read timed out. (read timeout=5)"},
			{"USER_SCOPE", int64(5), Styled{"due", ToneGood}, int64(466), thePast, Due(thePast), int64(0), "USER_UPDATE", ""},
			{"AUDIT_LOG_SCOPE", int64(77), Styled{"due", ToneGood}, int64(1), now.Add(-47*time.Hour - 57*time.Minute), Due(now.Add(-time.Second)), int64(3), "AUDIT_LOG_EVENT", "KeyError: 'organization_id'"},
		},
	}
	return Doc{{Name: "shards", Table: t, Footer: Shown(3, 466, "stuck shards", "--limit")}}
}

func printWith(t *testing.T, f Format, tty bool, width int, headers HeaderMode, doc Doc) (string, string) {
	t.Helper()
	s, out, errOut := Test()
	s.OutTTY = tty
	s.Width = width
	p := NewPrinter(s, f, false)
	p.Now = func() time.Time { return now }
	p.Headers = headers
	if err := p.Print(doc); err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String()
}

const footer = "showing 3 of 466 stuck shards (--limit)\n"

func TestFitTableToWidth(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		width int
		out   string
		err   string
	}{
		// attempts was dropped before next_attempt, then fits again once that one is gone.
		{80, "" +
			"SCOPE               SHARD  STATE        DEPTH  OLDEST           ATTEMPTS  \n" +
			"ORGANIZATION_SCOPE  4242   backing off  7      54m11s ago       12        \n" +
			"USER_SCOPE          5      due          466    never attempted  0         \n" +
			"AUDIT_LOG_SCOPE     77     due          1      1d23h ago        3         \n",
			"-o wide shows 3 hidden column(s): last_error, categories, next_attempt\n" + footer},
		{120, "" +
			"SCOPE               SHARD  STATE        DEPTH  OLDEST           NEXT ATTEMPT     ATTEMPTS  \n" +
			"ORGANIZATION_SCOPE  4242   backing off  7      54m11s ago       in 4m            12        \n" +
			"USER_SCOPE          5      due          466    never attempted  never attempted  0         \n" +
			"AUDIT_LOG_SCOPE     77     due          1      1d23h ago        due now          3         \n",
			"-o wide shows 2 hidden column(s): last_error, categories\n" + footer},
		{200, "" +
			"SCOPE               SHARD  STATE        DEPTH  OLDEST           NEXT ATTEMPT     ATTEMPTS  CATEGORIES                                      \n" +
			"ORGANIZATION_SCOPE  4242   backing off  7      54m11s ago       in 4m            12        ORGANIZATION_UPDATE,ORGANIZATION_MEMBER_UPDATE  \n" +
			"USER_SCOPE          5      due          466    never attempted  never attempted  0         USER_UPDATE                                     \n" +
			"AUDIT_LOG_SCOPE     77     due          1      1d23h ago        due now          3         AUDIT_LOG_EVENT                                 \n",
			"-o wide shows 1 hidden column(s): last_error\n" + footer},
	} {
		out, errOut := printWith(t, FormatTable, true, tt.width, HeadersAuto, stuck())
		out = ansi.Strip(out)
		if out != tt.out || errOut != tt.err {
			t.Errorf("width %d:\n%s\n%s", tt.width, out, errOut)
		}
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if w := ansi.StringWidth(l); w > tt.width {
				t.Errorf("width %d: line is %d wide: %q", tt.width, w, l)
			}
		}
	}
}

// TestFitCutsCellsWhenNothingCanGo: with no column to drop, the widest cells are cut with
// "…" (colour kept intact), never below the header's width.
func TestFitCutsCellsWhenNothingCanGo(t *testing.T) {
	t.Parallel()
	doc := stuck()
	doc[0].Table.Priority = nil
	doc[0].Table.Columns = doc[0].Table.Columns[:4]
	for i, r := range doc[0].Table.Rows {
		doc[0].Table.Rows[i] = r[:4]
	}
	doc[0].Table.Rows[0][0] = "ORGANIZATION_SCOPE_WITH_A_VERY_LONG_NAME"
	out, errOut := printWith(t, FormatTable, true, 40, HeadersAuto, doc)
	want := "" +
		"SCOPE        SHARD  STATE        DEPTH  \n" +
		"ORGANIZATI…  4242   backing off  7      \n" +
		"USER_SCOPE   5      due          466    \n" +
		"AUDIT_LOG_…  77     due          1      \n"
	if got := ansi.Strip(out); got != want || errOut != footer {
		t.Errorf("got\n%q\n%q", got, errOut)
	}
}

// TestWideShowsEverything: -o wide neither drops columns nor cuts cells, even on a pipe.
func TestWideShowsEverything(t *testing.T) {
	t.Parallel()
	out, errOut := printWith(t, FormatWide, false, 80, HeadersAuto, stuck())
	for _, want := range []string{"LAST ERROR", "Read timed out. (read timeout=5)", "ORGANIZATION_MEMBER_UPDATE", "in 4m"} {
		if !strings.Contains(out, want) {
			t.Errorf("wide lacks %q:\n%s", want, out)
		}
	}
	if errOut != footer {
		t.Errorf("stderr %q", errOut)
	}
}

// TestHeadersAndFootersPerFormat: the footer is on stderr in every format and never in the
// data; tab-separated output has a header line unless --no-headers, which drops the
// terminal header too.
func TestHeadersAndFootersPerFormat(t *testing.T) {
	t.Parallel()
	doc := func() Doc {
		return Doc{{Name: "s", Footer: "showing 1 of 2 shards (--limit)", Table: &Table{Columns: []string{"scope", "depth"}, Rows: [][]any{{"USER_SCOPE", int64(3)}}}}}
	}
	for _, tt := range []struct {
		name    string
		f       Format
		tty     bool
		headers HeaderMode
		out     string
	}{
		{"PipeAuto", FormatAuto, false, HeadersAuto, "scope\tdepth\nUSER_SCOPE\t3\n"},
		{"PipeOff", FormatAuto, false, HeadersOff, "USER_SCOPE\t3\n"},
		{"TTY", FormatAuto, true, HeadersAuto, "SCOPE       DEPTH  \nUSER_SCOPE  3      \n"},
		{"TTYNoHeaders", FormatAuto, true, HeadersOff, "USER_SCOPE  3  \n"},
		{"JSON", FormatJSON, false, HeadersAuto, "[\n  {\n    \"scope\": \"USER_SCOPE\",\n    \"depth\": 3\n  }\n]\n"},
		{"JSONL", FormatJSONL, false, HeadersOff, "{\"scope\":\"USER_SCOPE\",\"depth\":3}\n"},
		{"CSV", FormatCSV, false, HeadersOff, "scope,depth\nUSER_SCOPE,3\n"},
	} {
		out, errOut := printWith(t, tt.f, tt.tty, 0, tt.headers, doc())
		if got := ansi.Strip(out); got != tt.out || errOut != "showing 1 of 2 shards (--limit)\n" {
			t.Errorf("%s: got %q, stderr %q", tt.name, got, errOut)
		}
	}
}

func TestDocStreamHeaderAndFooter(t *testing.T) {
	t.Parallel()
	s, out, errOut := Test()
	p := NewPrinter(s, FormatAuto, false)
	p.Headers = HeadersAuto
	d := p.StartDoc(nil, Section{Name: "messages", Table: &Table{}})
	if err := d.Columns([]string{"id", "category"}); err != nil {
		t.Fatal(err)
	}
	if err := d.Row([]any{int64(1), "USER_UPDATE"}); err != nil {
		t.Fatal(err)
	}
	d.Footer(Shown(1, 74, "messages", "--limit"))
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "id\tcategory\n1\tUSER_UPDATE\n" || errOut.String() != "showing 1 of 74 messages (--limit)\n" {
		t.Errorf("got %q, stderr %q", out, errOut)
	}
}

func TestShown(t *testing.T) {
	t.Parallel()
	if got := Shown(20, 20, "stuck shards", "--limit"); got != "" {
		t.Errorf("nothing hidden: %q", got)
	}
	if got := Shown(50, 74, "messages", ""); got != "showing 50 of 74 messages" {
		t.Errorf("got %q", got)
	}
}

// TestFitCutsHeadersLast: when cutting values to their headers is not enough, headers are
// cut too (never below five columns), so the table still fits.
func TestFitCutsHeadersLast(t *testing.T) {
	t.Parallel()
	doc := Doc{{Table: &Table{
		// Names outside defaultPriority, so nothing is dropped and only cutting is tested.
		Columns: []string{"scheduled_at", "added_on", "category_label"},
		Rows:    [][]any{{Due(thePast), now.Add(-time.Hour), "ORGANIZATION_UPDATE"}},
	}}}
	out, _ := printWith(t, FormatTable, true, 30, HeadersAuto, doc)
	want := "" +
		"SCHEDUL…  ADDED ON  CATEGOR…  \n" +
		"never a…  1h ago    ORGANIZ…  \n"
	if got := ansi.Strip(out); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestStreamsToRendersAFrame: a frame rendered through To has the table, fitted to the
// terminal's width, and its footer in one buffer; the original streams are untouched.
func TestStreamsToRendersAFrame(t *testing.T) {
	t.Parallel()
	s, out, errOut := Test()
	s.OutTTY, s.Width = true, 80
	var frame strings.Builder
	p := NewPrinter(s.To(&frame), FormatAuto, true)
	p.Now = func() time.Time { return now }
	if err := p.Print(stuck()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(frame.String(), "SCOPE               SHARD  STATE") || !strings.HasSuffix(frame.String(), footer) ||
		out.Len() != 0 || errOut.Len() != 0 {
		t.Errorf("frame %q, out %q, err %q", frame.String(), out, errOut)
	}
}

// TestPipeHeaderOnlyAboveRows: piped output has its header line by default, --no-headers
// drops it, and an empty list prints nothing at all (collected or streamed), so a script's
// emptiness check keeps working.
func TestPipeHeaderOnlyAboveRows(t *testing.T) {
	t.Parallel()
	empty := Doc{{Name: "s", Table: &Table{Columns: []string{"scope", "depth"}}}}
	if out, _ := printWith(t, FormatAuto, false, 0, HeadersAuto, empty); out != "" {
		t.Errorf("empty collected: %q", out)
	}
	for _, tt := range []struct {
		headers HeaderMode
		rows    int
		want    string
	}{
		{HeadersAuto, 0, ""},
		{HeadersAuto, 2, "id\n1\n2\n"},
		{HeadersOff, 2, "1\n2\n"},
	} {
		s, out, _ := Test()
		p := NewPrinter(s, FormatAuto, false)
		p.Headers = tt.headers
		d := p.StartDoc(nil, Section{Name: "messages", Table: &Table{}})
		if err := d.Columns([]string{"id"}); err != nil {
			t.Fatal(err)
		}
		for i := range tt.rows {
			if err := d.Row([]any{int64(i + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != tt.want {
			t.Errorf("streamed %v/%d rows: %q, want %q", tt.headers, tt.rows, out, tt.want)
		}
	}
}
