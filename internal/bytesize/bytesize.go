// Package bytesize parses and prints the byte sizes of the input caps (--max-line-bytes and
// the like): every input outboxctl reads has one, and every refusal names its cap the same
// way, in the unit an operator types back.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// units are the suffixes Parse accepts, binary multiples only: a cap is about memory.
var units = []struct { //nolint:gochecknoglobals // immutable table
	suffix string
	mult   int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// Parse reads a positive size: a number of bytes, or a number with KiB, MiB or GiB.
func Parse(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q: want a positive number of bytes, or one with KiB, MiB or GiB (256MiB)", s)
	}
	return n * mult, nil
}

// Format prints n in the largest unit that divides it, as Parse reads it back (256MiB).
func Format(n int64) string {
	for _, u := range units {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
