package bytesize

import "testing"

func TestParseAndFormat(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want int64
		back string
	}{{"256MiB", 256 << 20, "256MiB"}, {"1GiB", 1 << 30, "1GiB"}, {"1536 KiB", 1536 << 10, "1536KiB"}, {"100", 100, "100B"}, {"3B", 3, "3B"}} {
		got, err := Parse(tt.in)
		if err != nil || got != tt.want || Format(got) != tt.back {
			t.Errorf("Parse(%q) = %d, %v; Format = %q, want %d, %q", tt.in, got, err, Format(got), tt.want, tt.back)
		}
	}
	for _, bad := range []string{"", "0", "-5MiB", "1.5GiB", "12MB", "9999999999GiB"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}
