package query

import (
	"math"
	"strconv"
)

// The bounded samples shards --limit and shards --stuck answer from under a low statement
// timeout (sql/shards.sql, top-shards-sample and stuck-shards-sample).

// TopShardsSample is TopShards from a bounded sample of percent of the table's pages
// (TABLESAMPLE SYSTEM): each shard's depth its sampled rows scaled up, every row estimated,
// no total_shards and no per-shard columns. What shards --limit answers when the whole pass
// would exceed the statement timeout's budget. f.Shard and f.Exact do not apply.
// seed picks the sample's pages (the same seed, the same pages of an unchanged table).
func TopShardsSample(t Target, f ShardFilter, percent float64, seed int64) Statement {
	args, on := sampleArgs(t, f, percent, seed)
	return siloStatement("top-shards-sample", t, []string{
		"Deepest shards of " + t.Describe() + " estimated from a sample of " + strconv.FormatFloat(percent, 'g', 4, 64) + "% of the table's pages:",
		"depth = the shard's sampled rows scaled up; a shard the sample missed is not listed.",
	}, nil, args, on...)
}

// StuckShardsSample is StuckShards from a bounded sample of percent of the table's pages:
// the shards holding a sampled row scheduled in the future, each confirmed in backoff by one
// probe (exact), its depth its sampled rows in backoff scaled up (estimated), no
// total_shards and no per-shard columns: TopShardsSampleRow's rows. What shards --stuck
// answers when its index pass did not finish within the statement timeout. f.Shard,
// f.Selected and f.Exact do not apply.
func StuckShardsSample(t Target, f ShardFilter, percent float64, seed int64) Statement {
	args, on := sampleArgs(t, f, percent, seed)
	return siloStatement("stuck-shards-sample", t, []string{
		"Shards of " + t.Describe() + " in backoff, estimated from a sample of " + strconv.FormatFloat(percent, 'g', 4, 64) + "% of the table's pages:",
		"each confirmed in backoff by one probe; depth = its sampled rows in backoff scaled up; a shard the sample missed is not listed.",
	}, nil, args, on...)
}

// sampleArgs are the values and filters a sample's statement takes.
func sampleArgs(t Target, f ShardFilter, percent float64, seed int64) (Args, []string) {
	args := t.cellArgs()
	var on []string
	for name, e := range map[string]*Enum{"scope": f.Scope, "category": f.Category} {
		if e != nil {
			args[name] = Arg{Value: e.Value, Note: e.note()}
			on = append(on, name)
		}
	}
	if f.MinDepth > 0 {
		args["min_depth"] = Arg{Value: f.MinDepth}
		on = append(on, "min_depth")
	}
	args["limit"] = Arg{Value: limitOrDefault(f.Limit)}
	args["seed"] = Arg{Value: seed, Note: "which pages: the same seed, the same sample"}
	args["hundredths"] = Arg{Value: int64(math.Round(percent * 100)), Note: "hundredths of a percent of the table's pages sampled"}
	return args, on
}

// SamplePercent is the share of a table of rows rows (percent to two decimals, at most 100,
// at least 0.01) a sample of at most budget rows reads.
func SamplePercent(budget, rows int64) float64 {
	if rows <= 0 {
		return 100
	}
	p := math.Floor(10000*float64(budget)/float64(rows)) / 100
	return min(max(p, 0.01), 100)
}

// TopShardsSampleRow is TopShardsSample's row: a shard's depth scaled up from the sample
// (estimated, with the sampled share of the table's pages).
type TopShardsSampleRow struct {
	RegionName      *string `db:"region_name,optional" json:"region_name,omitempty"`
	CellName        *string `db:"cell_name,optional" json:"cell_name,omitempty"`
	ShardScope      int64   `db:"shard_scope" json:"shard_scope"`
	ShardIdentifier int64   `db:"shard_identifier" json:"shard_identifier"`
	Depth           int64   `db:"depth" json:"depth"`
	Estimated       bool    `db:"estimated" json:"estimated"`
	SampledPercent  float64 `db:"sampled_percent" json:"sampled_percent"`
}
