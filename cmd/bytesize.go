package cmd

import "github.com/outboxctl/outboxctl/internal/bytesize"

// byteSize is the value of a --max-…-bytes flag: a cap on one input, in bytes, written 256MiB
// (KiB, MiB, GiB, or a plain number of bytes). Every input cap of outboxctl is such a flag on
// the command that reads the input, and its refusal names the flag (docs/security.md).
type byteSize int64

func (b *byteSize) String() string { return bytesize.Format(int64(*b)) }

func (b *byteSize) Set(s string) error {
	n, err := bytesize.Parse(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

func (b *byteSize) Type() string { return "size" }
