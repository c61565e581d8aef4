package cmd

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/outboxctl/outboxctl/internal/render"
)

// confirm shows a mutation's plan on stderr and asks for a yes. With --yes it proceeds;
// without a terminal it refuses with a usage error naming the flag (a script must say --yes
// explicitly, and an EOF on the prompt must never count as consent).
func (a *app) confirm(command string, plan []string, yes bool) error {
	printPlan(a.io.Err, plan)
	if yes {
		return nil
	}
	if !a.io.InTTY || !a.io.ErrTTY {
		return usageErrorf(command+" --yes", "`--yes` required when not running interactively")
	}
	fmt.Fprint(a.io.Err, "Proceed? [y/N] ")
	// The answer is read within a cap, like every input: an answer longer than the cap
	// (something pasted, or a stream of "y") is no consent, and costs at most the cap.
	line, _ := bufio.NewReader(io.LimitReader(a.io.In, maxAnswer+1)).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		if len(line) <= maxAnswer {
			return nil
		}
	}
	return declined()
}

// maxAnswer caps the prompt's answer: "yes" and its newline, with room for stray spaces.
const maxAnswer = 1 << 10

// printPlan shows a plan on stderr: before a confirmation, and alone for a dry run or a
// refusal. Every line is escaped: a plan quotes --reason, shard and handler names, which are
// the user's text and must not put raw control bytes on the terminal.
func printPlan(stderr io.Writer, plan []string) {
	fmt.Fprintln(stderr, "Plan:")
	for _, p := range plan {
		fmt.Fprintf(stderr, "  - %s\n", render.Escape(p))
	}
}

// manyShards is the most shards a terminal's "y" may consent to: a bulk change of more asks
// for its count typed back (confirmMany), so consent is to the number on the screen.
const manyShards = 100

// confirmMany is confirm for a change of n shards: on a terminal, more than manyShards
// needs n typed back rather than "y" (--yes still proceeds, and off a terminal it is still
// required).
func (a *app) confirmMany(command string, plan []string, yes bool, n int) error {
	if n <= manyShards || yes || !a.io.InTTY || !a.io.ErrTTY {
		return a.confirm(command, plan, yes)
	}
	printPlan(a.io.Err, plan)
	fmt.Fprintf(a.io.Err, "This changes %d shards. Type %d to proceed: ", n, n)
	line, _ := bufio.NewReader(io.LimitReader(a.io.In, maxAnswer+1)).ReadString('\n')
	if len(line) <= maxAnswer && strings.TrimSpace(line) == strconv.Itoa(n) {
		return nil
	}
	return declined()
}

// confirmShards asks for a change of n shards: confirm up to manyShards, confirmMany above.
func (d factory) confirmShards(command string, plan []string, yes bool, n int) error {
	if n <= manyShards {
		return d.confirm(command, plan, yes)
	}
	return d.confirmMany(command, plan, yes, n)
}
