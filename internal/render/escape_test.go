package render

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// hostile is text a handler, a payload or a name could carry to the terminal.
const hostile = "a\x1b]0;pwned\x07b\x1b[2K\rc\td\ne\u2028f\x9b\x7fg\u202eh\xff\\"

func TestEscape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                       "",
		"plain text, ü ✓":        "plain text, ü ✓",
		hostile:                  `a\x1b]0;pwned\x07b\x1b[2K\rc\td\ne\u2028f\x9b\x7fg\u202eh\xff\`,
		"\x00\x01\x1f":           `\x00\x01\x1f`,
		"\u0085\u009f\u2029":     `\u0085\u009f\u2029`,
		"C:\\path with \\x1b in": "C:\\path with \\x1b in",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := escapeTSV("a\\b\tc\x1b"), `a\\b\tc\x1b`; got != want {
		t.Errorf("escapeTSV = %q, want %q", got, want)
	}
	if got, want := escapeCSV("a\tb\nc\rd\x1b"), "a\tb\nc\\rd\\x1b"; got != want {
		t.Errorf("escapeCSV = %q, want %q", got, want)
	}
}

// TestEveryPrinterEscapes prints a document whose cells, keys and title carry control
// characters in every format, and requires that none reaches stdout raw (tab and newline
// are the layout of TSV and CSV, which quote them inside a value) and that JSON reads back
// to the exact value.
func TestEveryPrinterEscapes(t *testing.T) {
	t.Parallel()
	table := Doc{{Name: "rows", Title: "T" + hostile, Table: &Table{
		Columns: []string{"payload", "state"},
		Rows:    [][]any{{hostile, Styled{hostile, ToneBad}}},
	}}}
	card := Doc{{Name: "card", Card: []Field{{Key: "k" + hostile, Value: hostile}}}}
	for _, f := range []Format{FormatAuto, FormatTable, FormatMarkdown, FormatCSV, FormatJSON, FormatJSONL} {
		for _, doc := range []Doc{table, card} {
			for _, tty := range []bool{false, true} {
				out := printNoColor(t, f, tty, doc)
				layout := "\n"
				if f == FormatAuto && !tty || f == FormatCSV {
					layout = "\t\n"
				}
				if f == FormatCSV {
					out = strings.ReplaceAll(out, "\t", "") // CSV keeps a value's tabs and newlines, quoted
					out = strings.ReplaceAll(out, "d\ne", "de")
				}
				if i := strings.IndexFunc(out, func(r rune) bool { return textsafe.IsControl(r) && !strings.ContainsRune(layout, r) }); i >= 0 || !utf8.ValidString(out) {
					t.Errorf("%s (tty=%v): raw control character in output:\n%q", f, tty, out)
				}
			}
		}
	}
	var got []map[string]string
	if err := json.Unmarshal([]byte(print(t, FormatJSON, false, table)), &got); err != nil {
		t.Fatal(err)
	}
	if want := strings.ToValidUTF8(hostile, "\ufffd"); len(got) != 1 || got[0]["payload"] != want {
		t.Errorf("JSON did not carry the value exactly: %q", got)
	}
}

// printNoColor prints without our own colour codes, so any ESC left is the input's.
func printNoColor(t *testing.T, f Format, tty bool, doc Doc) string {
	t.Helper()
	s, out, _ := Test()
	s.OutTTY = tty
	s.Getenv = env("NO_COLOR", "1")
	if err := NewPrinter(s, f, false).Print(doc); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestNotesAndWarningsEscapeTheirArguments(t *testing.T) {
	t.Parallel()
	s, _, errOut := Test()
	p := NewPrinter(s, FormatAuto, false)
	p.Notef("handler said %s (%v)", "x\x1b[2Ky", errString("e\nf"))
	p.Warnf("value %q", "\x07")
	want := "handler said x\\x1b[2Ky (e\\nf)\nwarning: value \"\\\\x07\"\n"
	if errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// FuzzEscape checks the terminal escapers: no control character or invalid UTF-8 survives,
// and the tab-separated form reads back to the input, so distinct values stay distinct.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", hostile, "\\x1b", "\x1b", "\\", "\\\\n", "\n", "\u2028", "\x00", "\xff", "\xc3(", "\x9b2J", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Escape": Escape(s), "escapeTSV": escapeTSV(s)} {
			if strings.IndexFunc(out, textsafe.IsControl) >= 0 || !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q holds a control character", name, s, out)
			}
		}
		if back, ok := unescapeTSV(escapeTSV(s)); !ok || back != s {
			t.Fatalf("escapeTSV(%q) = %q reads back as %q", s, escapeTSV(s), back)
		}
	})
}

// unescapeTSV reverses escapeTSV: \\, \n, \r, \t, \xHH (a byte) and \uXXXX (a rune).
func unescapeTSV(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		switch c := s[i+1]; c {
		case '\\', 'n', 'r', 't':
			b.WriteByte(map[byte]byte{'\\': '\\', 'n': '\n', 'r': '\r', 't': '\t'}[c])
			i++
		case 'x', 'u':
			width := map[byte]int{'x': 2, 'u': 4}[c]
			if i+2+width > len(s) {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+2:i+2+width], 16, 32)
			if err != nil {
				return "", false
			}
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i += 1 + width
		default:
			return "", false
		}
	}
	return b.String(), true
}
