package killswitch

import (
	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// RunList is killswitch list on t: its SQL printed, or the kill-switch lists, what waits
// behind them and the backfill gates of tables read from any Sentry database (the options
// tables are all it needs) and returned as the document, with the error a list that could
// not be decoded ended with (the rest is shown first).
func RunList(r outbox.Reader, t query.Target, tables []backfill.Table) (render.Doc, error) {
	if r.PrintOnly {
		return nil, r.Print(query.Script{
			options.KillswitchStatement(t.Schema, query.OptionTable),
			options.KillswitchStatement(t.Schema, query.ControlOptionTable),
			query.KillswitchShards(PresentOutboxes(t.Schema, query.Schema{}), nil),
		})
	}
	reg, err := r.Registry()
	if err != nil {
		return nil, err
	}
	var l Listing
	err = r.Open(outbox.CheckOptions, func(s *outbox.Snapshot) error {
		l, err = ReadListing(s.Context(), s, s.Target.Schema, s.Schema, reg, tables)
		return err
	})
	if err != nil {
		return nil, err
	}
	return l.Said(r.Printer), l.ListErr
}

// Said is the listing's document after the notes a terminal shows: that no shard is
// disabled, and each options table whose list Sentry does not read here.
func (l Listing) Said(p *render.Printer) render.Doc {
	if !p.Structured() {
		if len(l.Disabled) == 0 {
			p.Notef("no shard is disabled")
		}
		for ot, ids := range l.Ignored {
			if len(ids) > 0 {
				p.Warnf("%s lists %d disabled shard(s), but Sentry does not read %s in this deployment (%s): they are NOT disabled; use killswitch add to disable them where Sentry reads", ot, len(ids), ot, l.Schema.DeploymentWhy)
			}
		}
	}
	return l.Doc()
}

// RunCheck is killswitch check of shard ids[0] of scope on t: its SQL printed, or whether the
// shard is disabled, in each options table and in the one Sentry reads, and what waits in
// it; silo is --silo as given (cell, region or control), for the title.
func RunCheck(r outbox.Reader, t query.Target, scope query.Enum, ids []int64, silo string) (render.Doc, error) {
	if r.PrintOnly {
		return nil, r.Print(query.Script{r.Guard(t), query.ShardDepths(t, scope, ids)})
	}
	reg, err := r.Registry()
	if err != nil {
		return nil, err
	}
	var c Checked
	err = r.Open(outbox.CheckOptions, func(s *outbox.Snapshot) (err error) {
		c, err = Check(s, reg, scope, ids)
		return err
	})
	if err != nil {
		return nil, err
	}
	if c.Warning != "" {
		r.Printer.Warnf("%s", c.Warning)
	}
	return c.Doc(scope.Name, ids[0], silo), c.ListErr
}
