package report

import "testing"

func TestRoughCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 12_937: "12,900", 156_401: "156,000", 77_494: "77,500", 2_345_678: "2,350,000"} {
		if got := roughCount(n); got != want {
			t.Errorf("roughCount(%d) = %q, want %q", n, got, want)
		}
	}
}
