package inspect

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// Listing is what shards read: the listing of its request (outbox.Snapshot.Shards) and the
// catalog it was read on (for the leftover categories' note).
type Listing struct {
	outbox.ShardsListing
	Era query.Schema
}

// ReadShards reads r's listing in s, the kill-switched shards left out first when r's
// selector asks (--not-killswitched).
func ReadShards(ctx context.Context, s *outbox.Snapshot, r outbox.ShardsRequest) (Listing, error) {
	l := Listing{Era: s.Schema}
	if err := killswitch.Excluded(ctx, s, s.Target, s.Schema, r.Filter.Selected); err != nil {
		return l, err
	}
	var err error
	l.ShardsListing, err = s.Shards(r)
	return l, err
}

// ShardsDoc is the listing with each shard's state (report.Shards; stuck: shards --stuck's
// columns) and the enums' notes in its footer; on a terminal it says no shard matched, and
// warns of kill switches it could not read or that disable nothing.
func (e Env) ShardsDoc(l Listing, stuck bool) (render.Doc, error) {
	doc, err := e.shardsDoc(l.ShardsListing, stuck)
	if err != nil {
		return nil, err
	}
	doc[0].Footer = report.JoinNotes(doc[0].Footer, report.EnumNotes(e.Registry, l.Rows, l.Era))
	return doc, nil
}

func (e Env) shardsDoc(l outbox.ShardsListing, stuck bool) (render.Doc, error) {
	if l.Note != "" {
		// A sample's listing: its own columns, labelled, no per-shard state.
		tbl, _, err := report.TableOf[query.TopShardsSampleRow](e.Registry, l.Rows)
		return render.Doc{{Name: "shards", Table: tbl, Footer: l.Note}}, err
	}
	res, ks := l.Rows, l.Switches
	doc, err := report.Shards(e.Registry, res, ks, e.Now(), stuck)
	if err != nil {
		return nil, err
	}
	if p := e.Printer; !p.Structured() {
		if len(res.Rows) == 0 {
			p.Notef("no shards matched")
		}
		if !ks.Known() {
			p.Warnf("no sentry_option or sentry_controloption table here: kill-switch state unknown")
		}
		for key, strays := range ks.Strays {
			p.Warnf("option %s lists %s, which disable nothing: Sentry compares integers", key, options.Strays(strays))
		}
	}
	return doc, nil
}
