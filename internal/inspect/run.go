package inspect

import (
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// The runs of inspect's commands and depth: each prints its script or reads in a snapshot
// the command's outbox.Reader opens, and returns its document. cmd keeps the flags, their
// checks and one call.

// Passing opens the read snapshot of a whole-table pass: fn is given the pass's progress
// line when the command's flag asked for the full pass (--full-pass, --exact), else nil
// (answer by the budget). cmd's passOptions.read is one.
type Passing func(fn func(*outbox.Snapshot, FullPass) error) error

// EnvOf is the Env of a read run through r; it reads the registry.
func EnvOf(r outbox.Reader) (Env, error) {
	reg, err := r.Registry()
	if err != nil {
		return Env{}, err
	}
	return Env{Registry: reg, Printer: r.Printer, Now: r.Now, Next: r.Next}, nil
}

// RunShard prints (or runs) shard k's state, categories and messages in t; the messages
// stream as they are read (StreamShard), so it returns no document, only the error a
// kill-switch read ended with. showPayload prints whole payloads in terminal tables.
func RunShard(r outbox.Reader, t query.Target, k query.ShardKey, pg Page, showPayload bool) error {
	if r.PrintOnly {
		return r.Print(pg.Script(t, k, r.Guard(t)))
	}
	env, err := EnvOf(r)
	if err != nil {
		return err
	}
	if showPayload {
		env.Printer.MaxCell = 0
	}
	var ksErr error
	err = r.Open(outbox.CheckOutbox, func(s *outbox.Snapshot) (err error) {
		ksErr, err = env.StreamShard(s, k, pg)
		return err
	})
	if err != nil {
		return err
	}
	return ksErr
}

// RunObject prints the lookup of one object's outboxes in t, or runs it and returns them.
func RunObject(r outbox.Reader, t query.Target, cat enums.Category, id int64, limit int, anyScope bool, shard *int64) (render.Doc, error) {
	env, err := EnvOf(r)
	if err != nil {
		return nil, err
	}
	l := env.Object(cat, id, limit, anyScope, shard)
	results, err := r.Read(t, func(t query.Target) query.Script { return query.Script{query.ObjectOutboxes(t, l)} })
	if err != nil || results == nil {
		return nil, err
	}
	return env.ObjectDoc(t, l, results[0])
}

// RunCategory prints the depth of one category's statement, or reads it in the snapshot
// pass opens and returns it: from the planner's statistics when the pass would exceed
// budget (and the full pass is not asked for), labelled so (Category.Read).
func RunCategory(r outbox.Reader, t query.Target, c Category, budget query.Budget, pass Passing) (render.Doc, error) {
	if r.PrintOnly {
		return nil, r.Print(query.Script{c.Statement(t)})
	}
	var a Answer
	err := pass(func(s *outbox.Snapshot, full FullPass) (err error) {
		a, err = c.Read(s, budget, r.Now, full)
		return err
	})
	if err != nil {
		return nil, err
	}
	env, err := EnvOf(r)
	if err != nil {
		return nil, err
	}
	return env.CategoryDoc(t, c, a)
}

// RunMessage prints the lookup of message id in t, or runs it and returns the message; a
// message that is not there is a failure (exit 1) naming the other silo.
func RunMessage(r outbox.Reader, t query.Target, id int64) (render.Doc, error) {
	results, err := r.Read(t, func(t query.Target) query.Script { return query.Script{query.Message(t, id)} })
	if err != nil || results == nil {
		return nil, err
	}
	if len(results[0].Rows) == 0 {
		return nil, outbox.Failuref("no outbox row with id %d in %s (already delivered, or another silo: try --silo %s)", id, t.Describe(), OtherSilo(t))
	}
	env, err := EnvOf(r)
	if err != nil {
		return nil, err
	}
	return env.MessageDoc(t, id, results[0])
}

// RunDepth prints the total depth and the depth per category, or reads them and returns
// them: the statistics alone (d.Estimate) in one statement, else in the snapshot pass
// opens, by budget or, asked for, the exact pass (Depth.Read).
func RunDepth(r outbox.Reader, t query.Target, d Depth, budget query.Budget, pass Passing) (render.Doc, error) {
	var a Answer
	if d.Estimate || r.PrintOnly {
		results, err := r.Read(t, d.Script)
		if err != nil || results == nil {
			return nil, err
		}
		a.Res = results[0]
	} else {
		err := pass(func(s *outbox.Snapshot, full FullPass) (err error) {
			a, err = d.Read(s, budget, r.Now, full)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	env, err := EnvOf(r)
	if err != nil {
		return nil, err
	}
	return env.DepthDoc(a)
}

// OtherSilo is the silo a hint suggests trying: the one the command did not look at.
func OtherSilo(t query.Target) query.Silo {
	if t.Control() {
		return query.SiloCell
	}
	return query.SiloControl
}

// RunShards prints (or runs) the shard listing req asks for and the kill switches' read,
// in the snapshot pass opens (under --pass-timeout when
// the full pass is asked for, with a progress line), and returns the listing's document
// (ReadShards, ShardsDoc; stuck: shards --stuck's columns) with the listing itself, for a
// threshold on its depths, and the error a kill-switch read ended with.
func RunShards(r outbox.Reader, t query.Target, req outbox.ShardsRequest, stuck bool, pass Passing) (render.Doc, Listing, error) {
	if r.PrintOnly {
		return nil, Listing{}, r.Print(query.Script{req.Statement(t), r.Guard(t)})
	}
	env, err := EnvOf(r)
	if err != nil {
		return nil, Listing{}, err
	}
	var l Listing
	err = pass(func(s *outbox.Snapshot, full FullPass) (err error) {
		req.FullPass = full // under --pass-timeout, with a progress line for the pass
		l, err = ReadShards(s.Context(), s, req)
		return err
	})
	if err != nil {
		return nil, l, err
	}
	doc, err := env.ShardsDoc(l, stuck)
	if err != nil {
		return nil, l, err
	}
	return doc, l, l.SwitchesErr
}
