package textsafe

import (
	"fmt"
	"strconv"
	"strings"
)

// Words splits a command line Command wrote as a POSIX shell would: bare words, '…' words
// and $'…' words (the escapes ShellQuote writes). top runs a finding's printed command
// with --dry-run by its words; the tests run every printed command this way.
func Words(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line): // an escaped character outside quotes (\')
			i++
			cur.WriteByte(line[i])
			in = true
		case c == ' ':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated quote in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '$' && i+1 < len(line) && line[i+1] == '\'':
			j := i + 2
			for j < len(line) && line[j] != '\'' {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			s, err := strconv.Unquote(`"` + strings.ReplaceAll(line[min(i+2, len(line)):min(j, len(line))], `\'`, `'`) + `"`)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", line, err)
			}
			cur.WriteString(s)
			i = j
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
