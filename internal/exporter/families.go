// Package exporter is outboxctl's Prometheus exporter: two collection tiers per context
// (cheap: estimates and index-aligned statements; expensive: the exact depth and the top
// shards), each on its own interval, statement timeout and kept-open connection, a cache of
// the last values that a scrape reads (a scrape never runs a query), and the HTTP server
// (/metrics, /healthz, /readyz). outboxctl metrics collects the same families once.
package exporter

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Label sets. Every label is bounded: contexts, tables, silos and replicated tables are
// short lists, and cells, scopes and categories (read from the database) are capped
// (LabelCaps, the rest summed under "other"); a shard is never a label (Sentry's own metrics
// avoid it for cardinality), the top shards get a rank 1..TopShards instead.
var (
	labelsTable    = []string{"context", "table", "silo"}
	labelsCell     = []string{"context", "table", "silo", "cell"}
	labelsScope    = []string{"context", "table", "silo", "cell", "scope"}
	labelsCategory = []string{"context", "table", "silo", "cell", "scope", "category"}
	labelsRank     = []string{"context", "table", "silo", "rank"}
	labelsBackfill = []string{"context", "replicated_table"}
	labelsTier     = []string{"context", "tier"}
)

// TopShards is how many of the deepest shards get a rank label.
const TopShards = 10

func desc(name, help string, labels []string) *prometheus.Desc {
	return prometheus.NewDesc("outboxctl_"+name, help, labels, nil)
}

// The families. Names, units and HELP texts follow Prometheus conventions (base units,
// _seconds, _total only on counters); docs/exporter.md lists them with their tiers.
var (
	descRows = desc("outbox_rows",
		"Rows waiting in the outbox table, counted exactly per cell, scope and category (expensive tier).", labelsCategory)
	descRowsEstimate = desc("outbox_rows_estimate",
		"Rows in the outbox table from the planner's statistics (pg_class.reltuples scaled to the table's size; cheap tier).", labelsTable)
	descStuck = desc("shards_stuck",
		"Shards in backoff: every row scheduled in the future, so Sentry's scheduler skips them (expensive tier).", labelsScope)
	descAtCap = desc("shards_at_cap",
		"Shards in backoff whose head row's delay reached Sentry's 1 h cap: poison suspects (expensive tier).", labelsScope)
	descKilled = desc("shards_killswitched_with_rows",
		"Kill-switched shards that still hold rows (expensive tier).", labelsScope)
	descKilledRows = desc("killswitched_rows",
		"Rows waiting behind kill-switched shards (expensive tier).", labelsScope)
	descOldest = desc("oldest_row_age_seconds",
		"Age of the oldest row (lowest id) of the outbox table, 0 when it is empty (cheap tier).", labelsCell)
	descUnclaimed = desc("oldest_unclaimed_due_seconds",
		"How long the longest-unclaimed due shard among the oldest rows has waited for Sentry's scheduler, 0 when none (cheap tier).", labelsCell)
	descTopRows = desc("top_shard_rows",
		"Rows of the rank-th deepest shard (expensive tier).", labelsRank)
	descTopDelay = desc("top_shard_backoff_seconds",
		"Current backoff step of the rank-th deepest shard, from its head row; 0 when it was never claimed (expensive tier).", labelsRank)
	descBackfillCursor = desc("backfill_cursor",
		"Backfill cursor of a replicated table: the lowest id not yet replicated (expensive tier).", labelsBackfill)
	descBackfillLeft = desc("backfill_rows_left",
		"Rows of a replicated table the backfill has still to walk, estimated (expensive tier).", labelsBackfill)
	descBackfillComplete = desc("backfill_complete",
		"1 when a replicated table's backfill is complete at its target version (expensive tier).", labelsBackfill)
	descBackfillGated = desc("backfill_gated",
		"1 when a replicated table's backfill is held by its replication_version option (expensive tier).", labelsBackfill)

	descFolded = desc("label_values_folded",
		"Values of a label (cell, scope, category) past its cap in the last expensive collection, whose series are summed under the value other.", append(slices.Clone(labelsTable), "label"))

	descUp = desc("up",
		"1 when the context's last cheap collection reached its database.", []string{"context"})
	descDuration = desc("collect_duration_seconds",
		"Wall time of the tier's last collection.", labelsTier)
	descErrors = desc("collect_errors_total",
		"Collections of the tier that failed (the last values are kept).", labelsTier)
	descLast = desc("last_collect_timestamp_seconds",
		"Unix time of the tier's last successful collection, 0 before the first.", labelsTier)
	descBuild = desc("build_info",
		"outboxctl's version, always 1.", []string{"version", "goversion"})
)

// allDescs is every family, for Describe.
var allDescs = []*prometheus.Desc{
	descRows, descRowsEstimate, descStuck, descAtCap, descKilled, descKilledRows, descOldest, descUnclaimed,
	descTopRows, descTopDelay, descBackfillCursor, descBackfillLeft, descBackfillComplete, descBackfillGated,
	descFolded, descUp, descDuration, descErrors, descLast, descBuild,
	descWebhookPayloads, descWebhookMailboxes, descWebhookBlocked, descWebhookOldest, descWebhookLongestBlocked,
	descWebhookTopPayloads, descWebhookTopAge, descWebhookTopBlocked,
}

// sample is one value of a family with its label values, as collected.
type sample struct {
	desc   *prometheus.Desc
	value  float64
	labels []string
}
