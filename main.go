// Command outboxctl inspects and repairs Sentry's transactional outboxes; see cmd.Main.
package main

import (
	"context"
	"os"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/render"
)

func main() { os.Exit(cmd.Main(context.Background(), os.Args[1:], render.System())) }
