package cmd

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/outboxctl/outboxctl/internal/render"
)

// confirm shows a mutation's plan on stderr and asks for a yes. With --yes it proceeds;
// without a terminal it refuses with a usage error naming the flag (a script must say --yes
// explicitly, and an EOF on the prompt must never count as consent).
func (a *app) confirm(command string, plan []string, yes bool) error {
	fmt.Fprintln(a.io.Err, "Plan:")
	for _, p := range plan {
		fmt.Fprintf(a.io.Err, "  - %s\n", render.Escape(p)) // a plan quotes --reason and names
	}
	if yes {
		return nil
	}
	if !a.io.InTTY || !a.io.ErrTTY {
		return usageErrorf(command+" --yes", "`--yes` required when not running interactively")
	}
	fmt.Fprint(a.io.Err, "Proceed? [y/N] ")
	line, _ := bufio.NewReader(a.io.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return &exitError{code: ExitUsage, msg: "cancelled: nothing was changed"}
}
