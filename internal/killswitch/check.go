package killswitch

import (
	"fmt"
	"io"
	"os"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// Checked is killswitch check's answer for one shard: the verdict's card, what waits in the
// shard (nil when the snapshot's outbox table is absent), the warning to show beside it, and
// the error reading a list ended with (the verdict the command ends with).
type Checked struct {
	Card    []render.Field
	Waiting *render.Table
	Warning string
	ListErr error
}

// Check reads, in snapshot s, whether shard ids[0] of scope is disabled (in each options
// table and in the one Sentry reads: ShardVerdict) and what waits in it.
func Check(s *outbox.Snapshot, reg *enums.Registry, scope query.Enum, ids []int64) (Checked, error) {
	id := ids[0]
	v, err := ShardVerdict(s.Context(), s, s.Target, s.Schema, scope, id)
	if err != nil {
		return Checked{}, err
	}
	c := Checked{Card: v.Card(scope.Name, id), Warning: v.Warning, ListErr: v.ListErr}
	if t := s.Target; s.Schema.Table(t.TableName()).Present {
		res, err := s.Run(query.ShardDepths(t, scope, ids))
		if err != nil {
			return c, err
		}
		if c.Waiting, _, err = report.TableOf[query.ShardDepthRow](reg, res); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Doc is the check's document for shard id of scope: the card, then what waits in the
// silo's outbox.
func (c Checked) Doc(scope string, id int64, silo string) render.Doc {
	doc := render.Doc{{Name: "killswitch", Title: fmt.Sprintf("Shard %s/%d", scope, id), Card: c.Card}}
	if c.Waiting != nil {
		doc = append(doc, render.Section{Name: "waiting", Title: "Waiting in " + silo + " outbox", Table: c.Waiting})
	}
	return doc
}

// IDsFrom merges the ids of --ids-from (path, or "-" for stdin) into have (ReadIDs, then
// MergeIDs), with how many repeated ids were dropped in all. Every error is the operator's
// to fix: the file, a bad line (its number), a file with no id and no id beside it.
func IDsFrom(path string, stdin io.Reader, have []int64) (ids []int64, repeats int, err error) {
	r, name := stdin, "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return have, 0, fmt.Errorf("--ids-from: %w", err)
		}
		defer f.Close()
		r, name = f, path
	}
	read, repeats, err := ReadIDs(r, name)
	if err != nil {
		return have, 0, fmt.Errorf("--ids-from %w", err)
	}
	if len(read) == 0 && len(have) == 0 {
		return have, 0, fmt.Errorf("--ids-from %s holds no shard id", name)
	}
	n := len(have) + len(read)
	ids = MergeIDs(have, read)
	return ids, repeats + n - len(ids), nil
}
