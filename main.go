// Command outboxctl inspects and repairs Sentry's transactional outboxes; see cmd.Main.
package main

import (
	"context"
	"os"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/jqrun"
	"github.com/outboxctl/outboxctl/internal/render"
)

func main() {
	// A --jq evaluation runs in a copy of this executable (internal/jqrun): that copy
	// evaluates and exits here.
	jqrun.RunChildIfAsked()
	os.Exit(cmd.Main(context.Background(), os.Args[1:], render.System()))
}
