package options

import (
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/query"
)

// TestOptionTableFor is the deployment table of reference §5.1: a monolith reads
// sentry_option for both outboxes, a split control silo sentry_controloption, a cell
// sentry_option; --deployment overrides the detected one; without a catalog (printed SQL)
// the deployment alone decides.
func TestOptionTableFor(t *testing.T) {
	t.Parallel()
	present := func(names ...string) map[string]query.TableInfo {
		m := map[string]query.TableInfo{}
		for _, n := range names {
			m[n] = query.TableInfo{Present: true}
		}
		return m
	}
	both := present(query.CellTable, query.ControlTable, query.OptionTable, query.ControlOptionTable)
	for _, tt := range []struct {
		name          string
		sch           query.Schema
		cell, control string
		governs       map[string][]query.Silo
	}{
		{"Monolith", query.Schema{Tables: both, Deployment: query.DeploymentMonolith}, query.OptionTable, query.OptionTable,
			map[string][]query.Silo{query.OptionTable: {query.SiloCell, query.SiloControl}, query.ControlOptionTable: nil}},
		{"SplitOverride", query.Schema{Tables: both, Deployment: query.DeploymentSplit}, query.OptionTable, query.ControlOptionTable,
			map[string][]query.Silo{query.OptionTable: {query.SiloCell}, query.ControlOptionTable: {query.SiloControl}}},
		{"ControlSilo", query.Schema{Tables: present(query.ControlTable, query.OptionTable, query.ControlOptionTable), Deployment: query.DeploymentSplit},
			query.OptionTable, query.ControlOptionTable,
			map[string][]query.Silo{query.OptionTable: nil, query.ControlOptionTable: {query.SiloControl}}},
		{"ControlBefore0439", query.Schema{Tables: present(query.ControlTable, query.OptionTable), Deployment: query.DeploymentSplit},
			query.OptionTable, query.OptionTable, map[string][]query.Silo{query.OptionTable: {query.SiloControl}}},
		{"CellSilo", query.Schema{Tables: present(query.CellTable, query.OptionTable), Deployment: query.DeploymentSplit},
			query.OptionTable, query.OptionTable, map[string][]query.Silo{query.OptionTable: {query.SiloCell}}},
		{"MonolithWithoutOption", query.Schema{Tables: present(query.CellTable, query.ControlTable, query.ControlOptionTable), Deployment: query.DeploymentMonolith},
			"", "", map[string][]query.Silo{query.ControlOptionTable: nil}},
		{"PrintedAuto", query.Schema{}, query.OptionTable, query.ControlOptionTable, nil},
		{"PrintedMonolith", query.Schema{Deployment: query.DeploymentMonolith}, query.OptionTable, query.OptionTable, nil},
	} {
		if got := OptionTableFor(query.SiloCell, tt.sch); got != tt.cell {
			t.Errorf("%s: cell reads %q, want %q", tt.name, got, tt.cell)
		}
		if got := OptionTableFor(query.SiloControl, tt.sch); got != tt.control {
			t.Errorf("%s: control reads %q, want %q", tt.name, got, tt.control)
		}
		for table, want := range tt.governs {
			if got := Governs(table, tt.sch); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s governs %v, want %v", tt.name, table, got, want)
			}
		}
	}
}
