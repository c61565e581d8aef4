package options

import (
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzDecode feeds stored values to the decoder: it never panics, every error is one line of
// bounded length, and whatever decodes can be read as ids or refused with a short error. The
// seeds hold every encoding, every bomb of bomb_test.go and the malformed cases; CI runs the
// seeds, `make fuzz` explores for 30 s (the fuzzer's own per-input timeout catches a bomb
// that escapes the caps).
func FuzzDecode(f *testing.F) {
	seeds := []string{
		"[1,2]", "[1, 2]", "null", "[]", `[42, "43", 44]`, `{"a": 1}`, "4", `"4"`, "[1, 2", "",
		"gAJLAUsChnEALg==", "gAJdcQAoSwFLAmUu", "gAJLKksHhnEALg==",
		base64.StdEncoding.EncodeToString([]byte("cos\nsystem\n(S'echo pwned'\ntR.")),
		base64.StdEncoding.EncodeToString([]byte{0x78, 0x9c, 1, 2, 3}),
		base64.StdEncoding.EncodeToString([]byte("hello world")),
	}
	for _, b := range bombs() {
		seeds = append(seeds, b)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := Decode(DisabledOrgShards, raw)
		if err == nil {
			_, _, err = v.IDs()
		}
		if err == nil {
			_, err = v.Int()
		}
		if err != nil {
			msg := err.Error()
			if len(msg) > 500 {
				t.Fatalf("error of %d bytes: %.200q", len(msg), msg)
			}
			if strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("multi-line error: %q", msg)
			}
		}
	})
}
