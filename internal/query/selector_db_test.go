package query

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestSelectedShardsRows runs each selector criterion against seed's cell table and requires
// exactly the shards it names, in key order, bound and printed alike; and pages with after.
func TestSelectedShardsRows(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seed(t, schema)
	ctx := context.Background()
	cell := Target{Silo: SiloCell, Schema: schema}
	keys := func(st Statement) []string {
		t.Helper()
		var out []string
		for i, text := range []func() (string, []any, error){st.Bind, func() (string, []any, error) { s, err := st.Render(); return s, nil, err }} {
			sql, args, err := text()
			if err != nil {
				t.Fatal(err)
			}
			if i == 1 {
				args = []any{pgx.QueryExecModeSimpleProtocol}
			}
			rows, err := testdb.Pool(t).Query(ctx, sql, args...)
			if err != nil {
				t.Fatalf("%s: %v", st.Name, err)
			}
			res, err := Collect(st.Name, rows)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Rows[SelectedShard](res)
			if err != nil {
				t.Fatal(err)
			}
			var ks []string
			for _, r := range got {
				ks = append(ks, fmt.Sprintf("%d/%d", r.Scope, r.ID))
			}
			if i == 0 {
				out = ks
			} else if !reflect.DeepEqual(ks, out) {
				t.Fatalf("%s printed gives %v, bound %v", st.Name, ks, out)
			}
		}
		return out
	}
	org, user := enum(0, "ORGANIZATION_SCOPE"), enum(1, "USER_SCOPE")
	future := time.Now().Add(time.Hour)
	for _, c := range []struct {
		name  string
		sel   ShardSelector
		after *ShardRef
		want  []string
	}{
		{"stuck", ShardSelector{Stuck: true}, nil, []string{"0/2", "1/5"}},
		{"at cap", ShardSelector{AtCap: true}, nil, []string{"0/2"}},
		{"scope", ShardSelector{Scope: user}, nil, []string{"1/5", "1/6"}},
		{"category", ShardSelector{Category: enum(32, "API_TOKEN_UPDATE")}, nil, []string{"1/6", "11/77"}},
		{"head category", ShardSelector{HeadCategory: enum(2, "ORGANIZATION_UPDATE")}, nil, []string{"0/1"}},
		{"head category is the head's", ShardSelector{HeadCategory: enum(3, "ORGANIZATION_MEMBER_UPDATE")}, nil, []string{"0/2"}},
		{"min depth", ShardSelector{MinDepth: 2}, nil, []string{"0/1", "0/2", "3/1"}},
		{"added before the future", ShardSelector{Scope: org, AddedBefore: &future}, nil, []string{"0/1", "0/2"}},
		{"added after the future", ShardSelector{Scope: org, AddedAfter: &future}, nil, nil},
		{"listed", ShardSelector{Listed: []ShardRef{{1, 6}, {0, 2}, {0, 404}}}, nil, []string{"0/2", "1/6"}},
		{"listed empty", ShardSelector{Listed: []ShardRef{}}, nil, nil},
		{"limit", ShardSelector{MinDepth: 1, Limit: 2}, nil, []string{"0/1", "0/2"}},
		{"after", ShardSelector{MinDepth: 1, Limit: 2}, &ShardRef{Scope: 0, ID: 2}, []string{"1/5", "1/6"}},
		{"every criterion", ShardSelector{Stuck: true, AtCap: true, Scope: org, Category: enum(3, ""), HeadCategory: enum(3, ""), MinDepth: 2, Listed: []ShardRef{{0, 2}}}, nil, []string{"0/2"}},
	} {
		if got := keys(SelectedShards(cell, c.sel, c.after)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: selected %v, want %v", c.name, got, c.want)
		}
	}
}
