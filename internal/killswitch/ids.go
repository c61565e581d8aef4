package killswitch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// MaxIDLineBytes caps one line of an --ids-from file: an id is at most 19 digits, so a
// longer line is no id list (a binary, a JSON document), refused with its line number.
const MaxIDLineBytes = 1 << 10

// MaxIDs caps how many ids one --ids-from file may hold: a kill-switch list is an option
// value every Sentry worker reads and caches, and an option this large is a mistake.
const MaxIDs = 100_000

// ReadIDs reads shard ids from r (killswitch add|remove --ids-from; name says which file in
// an error: a path, or "stdin"): one non-negative integer per line, surrounding blanks
// ignored, blank lines and lines starting with '#' skipped. A bad line is refused with its
// number, and nothing is read past it. The ids come back sorted without repeats, with how
// many repeated ids were dropped.
func ReadIDs(r io.Reader, name string) (ids []int64, repeats int, err error) {
	br := bufio.NewReaderSize(r, MaxIDLineBytes+1)
	seen := map[int64]bool{}
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, fmt.Errorf("%s line %d: %w", name, n, err)
		}
		if tooLong {
			return nil, 0, fmt.Errorf("%s line %d: longer than %d bytes: want one shard id per line", name, n, MaxIDLineBytes)
		}
		s := strings.TrimSpace(line)
		switch {
		case s == "" || strings.HasPrefix(s, "#"):
		default:
			id, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil || id < 0 {
				return nil, 0, fmt.Errorf("%s line %d: invalid shard id %s: want one non-negative integer per line (blank lines and # comments are skipped)", name, n, quoteLine(s))
			}
			if seen[id] {
				repeats++
			} else if seen[id] = true; len(seen) > MaxIDs {
				return nil, 0, fmt.Errorf("%s line %d: more than %d shard ids: split the change", name, n, MaxIDs)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	ids = make([]int64, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, repeats, nil
}

// readLine reads one line without its end (\n or \r\n); tooLong when it exceeds
// MaxIDLineBytes (the rest of the input is not read); io.EOF with the last line.
func readLine(br *bufio.Reader) (string, bool, error) {
	b, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return "", true, nil
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(b) > MaxIDLineBytes {
		return "", true, nil
	}
	return string(b), false, err
}

// quoteLine is a refused line as an error shows it: quoted, control bytes escaped, clipped.
func quoteLine(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s) // escapes control bytes and invalid UTF-8
}

// MergeIDs is the sorted union of id lists.
func MergeIDs(lists ...[]int64) []int64 {
	var all []int64
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}
