package render

import (
	"math"
	"os"
	"strconv"
	"strings"
)

// The sparkline's glyphs, lowest level first: eight block heights, or (ASCII) eight
// characters of growing ink. A missing point is a space in both.
const (
	sparkBlocks = "▁▂▃▄▅▆▇█"
	sparkASCII  = "_.-:=+*#"
)

// Sparkline is values as one glyph a value, scaled from 0 to the largest value (a depth or
// an age is never below 0: a flat line of 12,345 rows is drawn full height, a flat line of 0
// at the bottom, so the height says how much, not only how it moved); a NaN is a gap (no
// sample there), a negative value counts as 0. ascii draws with sparkASCII, for a terminal
// without Unicode (UnicodeOK).
func Sparkline(values []float64, ascii bool) string {
	glyphs := []rune(sparkBlocks)
	if ascii {
		glyphs = []rune(sparkASCII)
	}
	top := 0.0
	for _, v := range values {
		if !math.IsNaN(v) && v > top {
			top = v
		}
	}
	var b strings.Builder
	for _, v := range values {
		switch {
		case math.IsNaN(v):
			b.WriteByte(' ')
		case top <= 0 || v <= 0:
			b.WriteRune(glyphs[0])
		default:
			// The top level is the largest value alone of its eighth: round, not truncate,
			// so that half of the largest is drawn at half height.
			i := int(math.Round(v / top * float64(len(glyphs)-1)))
			b.WriteRune(glyphs[min(i, len(glyphs)-1)])
		}
	}
	return b.String()
}

// UnicodeOK says whether the terminal's locale takes Unicode: the first of LC_ALL,
// LC_CTYPE and LANG that is set names UTF-8 (C, POSIX or a Latin-1 locale do not). With none
// set it is true: top's other lines (…, ›, ·) assume it already.
func UnicodeOK(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return true
}

// Count is n with its thousands grouped by commas (12,345): a count a person compares at
// a glance.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
