package repair

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/outboxctl/outboxctl/internal/render"
)

// TypedBackOver is the number of shards above which a plan confirmed on a terminal needs the
// count typed back: a "y" is too easy to give to 2,000 shards.
const TypedBackOver = 100

// maxAnswer caps the prompt's answer: "yes" and its newline, with room for stray spaces.
const maxAnswer = 1 << 10

// ShowPlan writes a plan on w (stderr): before a confirmation, and alone for a dry run or a
// refusal. Every line is escaped: a plan quotes --reason, shard and handler names, which are
// the user's text and must not put raw control bytes on the terminal.
func ShowPlan(w io.Writer, lines []string) {
	fmt.Fprintln(w, "Plan:")
	for _, l := range lines {
		fmt.Fprintf(w, "  - %s\n", render.Escape(l))
	}
}

// Consent asks on w (a terminal's stderr) and reads the answer from in: a plan of more than
// TypedBackOver shards needs their count typed back, any other a y. The answer is read
// within a cap, like every input: one longer than the cap (something pasted, or a stream of
// "y") is no consent, and costs at most the cap; an EOF is none either.
func Consent(in io.Reader, w io.Writer, shards int) bool {
	if shards > TypedBackOver {
		fmt.Fprintf(w, "This changes %d shards. Type the number of shards to proceed: ", shards)
		line, _ := bufio.NewReader(io.LimitReader(in, maxAnswer+1)).ReadString('\n')
		return len(line) <= maxAnswer && strings.TrimSpace(line) == strconv.Itoa(shards)
	}
	fmt.Fprint(w, "Proceed? [y/N] ")
	line, _ := bufio.NewReader(io.LimitReader(in, maxAnswer+1)).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return len(line) <= maxAnswer
	}
	return false
}
