package query

import "time"

// The statements every test below runs: each question the operators' guide asks, with each
// filter combination, in both silos. Golden files hold their printed form; the database tests
// run each of them printed and bound.

func enum(v int, name string) *Enum { return &Enum{Value: v, Name: name} }

func i64(v int64) *int64 { return &v }

type testCase struct {
	name   string
	script func(t Target) Script
}

// evilCell is a cell name that would break out of a naively pasted literal.
const evilCell = `x'; DROP TABLE y; --`

var cases = []testCase{ //nolint:gochecknoglobals // test table
	{"top-shards", func(t Target) Script { return Script{TopShards(t, ShardFilter{})} }},
	{"top-shards-filtered", func(t Target) Script {
		return Script{TopShards(t, ShardFilter{
			Scope: enum(0, "ORGANIZATION_SCOPE"), Category: enum(2, "ORGANIZATION_UPDATE"), Limit: 5, MinDepth: 2,
		})}
	}},
	{"top-shards-kept", func(t Target) Script {
		return Script{TopShards(t, ShardFilter{Floor: 40, Exact: true}), TopShards(t, ShardFilter{
			Scope: enum(0, "ORGANIZATION_SCOPE"), Category: enum(2, "ORGANIZATION_UPDATE"), Limit: 5, MinDepth: 2, Floor: 3,
		})}
	}},
	{"top-shards-estimated", func(t Target) Script {
		return Script{TopShards(t, ShardFilter{Floor: 40}), TopShards(t, ShardFilter{Scope: enum(1, "USER_SCOPE"), Limit: 5, Floor: 3})}
	}},
	{"top-shards-floor", func(t Target) Script {
		return Script{TopShardsFloor(t, ShardFilter{}, FloorPlan{Percent: 2.5, Candidates: 20, Cap: 40}, 1), TopShardsFloor(t, ShardFilter{
			Scope: enum(0, "ORGANIZATION_SCOPE"), Category: enum(2, "ORGANIZATION_UPDATE"), Limit: 5, MinDepth: 2,
		}, FloorPlan{Percent: 100, Candidates: 10, Cap: 2}, 2)}
	}},
	{"top-shards-exact", func(t Target) Script {
		return Script{TopShards(t, ShardFilter{Exact: true, Category: enum(3, "ORGANIZATION_MEMBER_UPDATE")})}
	}},
	{"stuck-shards", func(t Target) Script { return Script{StuckShards(t, ShardFilter{})} }},
	{"stuck-shards-filtered", func(t Target) Script {
		return Script{StuckShards(t, ShardFilter{
			Scope: enum(0, "ORGANIZATION_SCOPE"), Category: enum(3, "ORGANIZATION_MEMBER_UPDATE"), Limit: 10,
		})}
	}},
	{"stuck-shards-one-shard", func(t Target) Script {
		return Script{StuckShards(t, ShardFilter{Scope: enum(1, "USER_SCOPE"), Shard: i64(5)})}
	}},
	{"selected-shards-stuck-at-cap", func(t Target) Script {
		return Script{SelectedShards(t, ShardSelector{Stuck: true, AtCap: true, Scope: enum(0, "ORGANIZATION_SCOPE")}, nil)}
	}},
	{"selected-shards-every-criterion", func(t Target) Script {
		after, before := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
		return Script{SelectedShards(t, ShardSelector{
			Scope: enum(0, "ORGANIZATION_SCOPE"), Category: enum(3, "ORGANIZATION_MEMBER_UPDATE"), HeadCategory: enum(3, "ORGANIZATION_MEMBER_UPDATE"),
			AddedAfter: &after, AddedBefore: &before, MinDepth: 2, Listed: []ShardRef{{0, 2}, {0, 1}}, Limit: 10,
		}, &ShardRef{Scope: 0, ID: 1})}
	}},
	{"selected-shards-category", func(t Target) Script {
		return Script{SelectedShards(t, ShardSelector{Category: enum(2, "ORGANIZATION_UPDATE")}, nil)}
	}},
	{"top-shards-selected", func(t Target) Script {
		return Script{TopShards(t, ShardFilter{Category: enum(2, "ORGANIZATION_UPDATE"), Selected: &ShardSelector{HeadCategory: enum(3, "ORGANIZATION_MEMBER_UPDATE")}})}
	}},
	{"stuck-shards-selected", func(t Target) Script {
		return Script{StuckShards(t, ShardFilter{Scope: enum(0, "ORGANIZATION_SCOPE"), Selected: &ShardSelector{Scope: enum(0, "ORGANIZATION_SCOPE"), AtCap: true, Listed: []ShardRef{{0, 2}}}})}
	}},
	{"inspect-shard", func(t Target) Script {
		k := ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}
		return Script{ShardState(t, k), ShardCategories(t, k), ShardMessages(t, k, 50, false)}
	}},
	{"inspect-shard-given-depth", func(t Target) Script {
		k := ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}
		// inspect shard runs shard-categories first (as in inspect-shard), then this.
		return Script{ShardStateGivenDepth(t, k, map[string]int64{"": 3, "us": 2, "eu": 1})}
	}},
	{"inspect-shard-all", func(t Target) Script {
		return Script{ShardMessagesAll(t, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 2})}
	}},
	{"inspect-shard-exact", func(t Target) Script {
		return Script{ShardMessages(t, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}, 10, true)}
	}},
	{"top-shards-sample", func(t Target) Script {
		return Script{TopShardsSample(t, ShardFilter{}, 2.5, 1), TopShardsSample(t, ShardFilter{
			Scope: enum(0, "ORGANIZATION_SCOPE"), Category: enum(2, "ORGANIZATION_UPDATE"), Limit: 5, MinDepth: 2,
		}, 0.25, 2)}
	}},
	{"stuck-shards-sample", func(t Target) Script {
		return Script{StuckShardsSample(t, ShardFilter{}, 2.5, 1), StuckShardsSample(t, ShardFilter{
			Scope: enum(0, "ORGANIZATION_SCOPE"), Category: enum(2, "ORGANIZATION_UPDATE"), Limit: 5, MinDepth: 2,
		}, 0.25, 2)}
	}},
	{"inspect-category-estimate", func(t Target) Script {
		at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		return Script{TableStatistics(t), CategoryEstimate(t, Enum{2, "ORGANIZATION_UPDATE"}, 2_000_000, &at)}
	}},
	{"inspect-category", func(t Target) Script { return Script{CategoryDepth(t, Enum{2, "ORGANIZATION_UPDATE"})} }},
	{"inspect-object-shard", func(t Target) Script {
		return Script{ObjectOutboxes(t, ObjectLookup{
			Category: Enum{2, "ORGANIZATION_UPDATE"}, Scope: enum(0, "ORGANIZATION_SCOPE"), ObjectID: 1, ShardFromObject: true,
		})}
	}},
	{"inspect-object-scope", func(t Target) Script {
		return Script{ObjectOutboxes(t, ObjectLookup{
			Category: Enum{3, "ORGANIZATION_MEMBER_UPDATE"}, Scope: enum(0, "ORGANIZATION_SCOPE"), ObjectID: 10,
		})}
	}},
	{"inspect-object-any-scope", func(t Target) Script {
		return Script{ObjectOutboxes(t, ObjectLookup{Category: Enum{32, "API_TOKEN_UPDATE"}, ObjectID: 77, Limit: 5})}
	}},
	{"inspect-object-given-shard", func(t Target) Script {
		return Script{ObjectOutboxes(t, ObjectLookup{
			Category: Enum{3, "ORGANIZATION_MEMBER_UPDATE"}, Scope: enum(0, "ORGANIZATION_SCOPE"), ObjectID: 10, Shard: i64(1),
		})}
	}},
	{"inspect-message", func(t Target) Script { return Script{Message(t, 2)} }},
	{"depth", func(t Target) Script { return Script{Depth(t)} }},
	{"depth-estimate", func(t Target) Script { return Script{DepthEstimate(t)} }},
	{"exporter-oldest-row", func(t Target) Script { return Script{OldestRow(t)} }},
	{"exporter-depth", func(t Target) Script { return Script{ExactDepth(t)} }},
	{"exporter-shard-states", func(t Target) Script { return Script{ShardStates(t)} }},
	{"depth-total", func(t Target) Script { return Script{TableStatistics(t), DepthTotal(t)} }},
	{"depth-split", func(t Target) Script {
		at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		return Script{DepthSplit(t, 2_000_000, false, &at), DepthSplit(t, 2_000_000, true, nil)}
	}},
	{"killswitch-shards", func(t Target) Script {
		return Script{KillswitchShards([]Target{t}, []KillswitchList{
			{OptionsTable: OptionTable, Scope: 0, IDs: []int64{1, 2, 404}},
			{OptionsTable: ControlOptionTable, Scope: 1, IDs: []int64{5}},
		})}
	}},
}

// targets are the tables every case is rendered for.
func targets(schema string) map[string]Target { return targetsWithCell(schema, evilCell) }

// targetsWithCell is the three targets of schema: the cell silo, the control silo, and the
// control silo narrowed to cell (--cell).
func targetsWithCell(schema, cell string) map[string]Target {
	return map[string]Target{
		"cell":         {Silo: SiloCell, Schema: schema},
		"control":      {Silo: SiloControl, Schema: schema},
		"control-cell": {Silo: SiloControl, Schema: schema, Cell: cell},
	}
}
