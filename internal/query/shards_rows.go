package query

import "time"

// The row types of outboxctl shards' statements (sql/shards.sql). Their json tags are the
// JSON keys of the listing (report.Shards adds the names and the shard state beside them:
// report.Names, report.ShardState). In the control silo a row leads with its cell, named as
// the table names it (region_name, or cell_name where the column was renamed).

// TopShardsRow is a row of TopShards: the deepest shards.
type TopShardsRow struct {
	RegionName      *string    `db:"region_name,optional" json:"region_name,omitempty"`
	CellName        *string    `db:"cell_name,optional" json:"cell_name,omitempty"`
	ShardScope      int64      `db:"shard_scope" json:"shard_scope"`
	ShardIdentifier int64      `db:"shard_identifier" json:"shard_identifier"`
	Depth           int64      `db:"depth" json:"depth"`
	CoalesceGroups  int64      `db:"coalesce_groups" json:"coalesce_groups"`
	Categories      []int64    `db:"categories" json:"categories"`
	NextAttempt     *time.Time `db:"next_attempt" json:"next_attempt"`
	Due             *bool      `db:"due" json:"due"`
	LastDelay       *float64   `db:"last_delay_seconds" json:"last_delay_seconds"`
	LastAttempt     *time.Time `db:"last_attempt" json:"last_attempt"`
	OldestMessage   *time.Time `db:"oldest_message" json:"oldest_message"`
	// TotalShards is the planner's estimate when TotalExact is false (shards without
	// --exact; then fewer than --limit rows mean it is their count, and exact).
	TotalShards int64 `db:"total_shards" json:"total_shards"`
	TotalExact  bool  `db:"total_exact" json:"total_exact"`
}

// StuckShardsRow is a row of StuckShards: the shards in backoff (no due column: none is).
type StuckShardsRow struct {
	RegionName      *string    `db:"region_name,optional" json:"region_name,omitempty"`
	CellName        *string    `db:"cell_name,optional" json:"cell_name,omitempty"`
	ShardScope      int64      `db:"shard_scope" json:"shard_scope"`
	ShardIdentifier int64      `db:"shard_identifier" json:"shard_identifier"`
	Depth           int64      `db:"depth" json:"depth"`
	CoalesceGroups  int64      `db:"coalesce_groups" json:"coalesce_groups"`
	Categories      []int64    `db:"categories" json:"categories"`
	NextAttempt     *time.Time `db:"next_attempt" json:"next_attempt"`
	LastDelay       *float64   `db:"last_delay_seconds" json:"last_delay_seconds"`
	LastAttempt     *time.Time `db:"last_attempt" json:"last_attempt"`
	OldestMessage   *time.Time `db:"oldest_message" json:"oldest_message"`
	TotalShards     int64      `db:"total_shards" json:"total_shards"`
}
