package cmd

import "github.com/outboxctl/outboxctl/internal/cmdline"

// byteSize is the value of a --max-…-bytes flag: a cap on one input, in bytes (cmdline.Size).
type byteSize = cmdline.Size
