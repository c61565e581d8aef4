package query

import (
	"fmt"
	"io"
)

// RestoreOperation is one archived operation of a printed restore script: its header, the
// notes printed commented out under it, and its INSERTs (none: nothing to restore).
type RestoreOperation struct {
	ID, Command string
	Rows        int
	Into        string // the table and shards the rows go into, as the plan names them
	Notes       []string
	Statements  Script
}

// RestoreScript is restore --print-sql: the INSERTs of every operation in the transaction
// restore runs them in, its session preamble first, and the operations left out named.
type RestoreScript struct {
	Preamble   []string
	Operations []RestoreOperation
	LeftOut    []string // skip operations --all leaves out, by id
}

// RenderTo writes the script to w as it is rendered: a payload is never copied to be
// printed (a restored one may be hundreds of MB).
func (s RestoreScript) RenderTo(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.WriteString("-- outboxctl restore --print-sql: reinsert archived rows with their original ids, payloads and\n-- schedules; ids that exist are left alone (ON CONFLICT (id) DO NOTHING).\n")
	if err := Preamble(s.Preamble).RenderTo(ew); err != nil {
		return err
	}
	for _, op := range s.Operations {
		fmt.Fprintf(ew, "\n-- operation %s (%s): %d row(s) into %s\n", op.ID, op.Command, op.Rows, op.Into)
		for _, n := range op.Notes {
			ew.WriteString(CommentOut(n))
		}
		if len(op.Statements) == 0 || ew.err != nil {
			continue
		}
		if err := op.Statements.RenderTo(ew); err != nil {
			return err
		}
	}
	for _, id := range s.LeftOut {
		fmt.Fprintf(ew, "\n-- left out: skip operation %s (poison messages); to restore it add --operation %s\n", id, id)
	}
	ew.WriteString("\n")
	if err := Commit().RenderTo(ew); err != nil {
		return err
	}
	return ew.err
}
