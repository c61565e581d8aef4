package render

import (
	"math"
	"testing"
)

// TestSparkline pins the glyphs: scaled from 0 to the largest value, a gap a space, the
// flat and single-point cases, and the ASCII set.
func TestSparkline(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, c := range []struct {
		name   string
		values []float64
		ascii  bool
		want   string
	}{
		{"ramp", []float64{0, 1, 2, 3, 4, 5, 6, 7}, false, "▁▂▃▄▅▆▇█"},
		{"ramp ascii", []float64{0, 1, 2, 3, 4, 5, 6, 7}, true, "_.-:=+*#"},
		{"half is half height", []float64{50, 100}, false, "▅█"},
		{"flat non-zero is full height", []float64{12345, 12345, 12345}, false, "███"},
		{"flat zero is the bottom", []float64{0, 0, 0}, false, "▁▁▁"},
		{"single point", []float64{42}, false, "█"},
		{"single zero", []float64{0}, true, "_"},
		{"gaps", []float64{nan, 10, nan, 5}, false, " █ ▅"},
		{"all gaps", []float64{nan, nan}, false, "  "},
		{"negative counts as zero", []float64{-3, 7}, false, "▁█"},
		{"none", nil, false, ""},
	} {
		if got := Sparkline(c.values, c.ascii); got != c.want {
			t.Errorf("%s: Sparkline(%v) = %q, want %q", c.name, c.values, got, c.want)
		}
	}
}

func TestUnicodeOKAndCount(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, true},
		{map[string]string{"LANG": "en_US.UTF-8"}, true},
		{map[string]string{"LANG": "C.utf8"}, true},
		{map[string]string{"LANG": "C"}, false},
		{map[string]string{"LC_ALL": "POSIX", "LANG": "en_US.UTF-8"}, false},
		{map[string]string{"LC_CTYPE": "de_DE.ISO-8859-1"}, false},
	} {
		if got := UnicodeOK(env(c.env)); got != c.want {
			t.Errorf("UnicodeOK(%v) = %v, want %v", c.env, got, c.want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 12345: "12,345", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
