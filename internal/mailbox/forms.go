package mailbox

import (
	"strings"

	"github.com/outboxctl/outboxctl/internal/refused"
)

// The mailbox forms of the repairs, checked before anything connects: reschedule --mailbox
// NAME or --mailbox-provider P, and skip --mailbox NAME --head. command is the command's
// path (their Try: lines), args how many arguments it was given, and onlyTheirs refuses a
// flag of the outbox forms (cmd's, which knows the flags).

// CheckRescheduleForm refuses both reschedule forms at once, arguments, the outbox forms'
// flags and a NUL byte in a name.
func CheckRescheduleForm(command, name, provider string, args int, onlyTheirs func() error) error {
	if name != "" && provider != "" {
		return refused.Errorf(command+" --mailbox "+name, "`--mailbox` and `--mailbox-provider` exclude each other: pass one")
	}
	if args > 0 {
		return refused.Errorf(command+" --help", "%s --mailbox takes no SCOPE ID: a mailbox is not an outbox shard", command)
	}
	if err := onlyTheirs(); err != nil {
		return err
	}
	if strings.ContainsRune(name+provider, 0) {
		return refused.Errorf(command+" --help", "a mailbox or provider name holds no NUL byte")
	}
	return nil
}

// CheckSkipForm refuses skip --mailbox without --head (or --head alone), a MESSAGE_ID, the
// outbox forms' flags, and --print-sql: the skip archives before it deletes, which a printed
// script cannot.
func CheckSkipForm(command, name string, head bool, args int, onlyTheirs func() error, printSQL bool) error {
	if name == "" || !head {
		return refused.Errorf(command+" --mailbox NAME --head", "`--mailbox` and `--head` go together: skip --mailbox NAME --head skips that mailbox's head")
	}
	if args > 0 {
		return refused.Errorf(command+" --help", "%s --mailbox takes no MESSAGE_ID: a webhook payload is not an outbox message", command)
	}
	if err := onlyTheirs(); err != nil {
		return err
	}
	if printSQL {
		return refused.Errorf(command+" --mailbox "+name+" --head --dry-run", "skip --mailbox archives before it deletes, which a printed script cannot: --dry-run shows the plan")
	}
	return nil
}
