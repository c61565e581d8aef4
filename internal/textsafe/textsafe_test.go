package textsafe

import "testing"

func TestIsControl(t *testing.T) {
	t.Parallel()
	for _, r := range "\x00\n\r\t\x1b\x7f\u0085\u009b\u2028\u2029\u202a\u202e\u2066\u2069\u200e\u200f\u061c" {
		if !IsControl(r) {
			t.Errorf("IsControl(%U) = false", r)
		}
	}
	for _, r := range " a'\"\\é€\u00a0\u200b" {
		if IsControl(r) {
			t.Errorf("IsControl(%U) = true", r)
		}
	}
}
