package query

import (
	"fmt"
	"strconv"
	"strings"
)

// Silo is the side of Sentry whose outbox table a command reads.
type Silo string

// The two silos. Sentry's "region" silo was renamed "cell" in 2026; its table kept its name.
const (
	SiloCell    Silo = "cell"
	SiloControl Silo = "control"
)

// ParseSilo accepts cell (or its old name, region) and control.
func ParseSilo(s string) (Silo, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "cell", "region":
		return SiloCell, nil
	case "control":
		return SiloControl, nil
	}
	return "", fmt.Errorf("invalid silo %q: valid values are cell (alias region) and control", s)
}

// Default table names. There is no sentry_celloutbox: CellOutbox kept db_table
// "sentry_regionoutbox", and ControlOutbox.cell_name kept db_column "region_name".
const (
	CellTable         = "sentry_regionoutbox"
	ControlTable      = "sentry_controloutbox"
	DefaultCellColumn = "region_name"
)

// Target says which outbox table a statement reads and how it is keyed.
type Target struct {
	Silo Silo
	// Schema qualifies the table; empty means the session's search_path.
	Schema string
	// Table overrides the silo's default table (for sentry_groupactionlogoutbox, getsentry's
	// extra outboxes, …).
	Table string
	// Cell restricts a control-silo statement to one cell (the region_name column).
	Cell string
	// CellColumn is the control table's cell column: region_name in every Sentry version, but
	// a database that ran a real rename would have cell_name.
	CellColumn string
}

// Validate checks the combination of silo, table and cell.
func (t Target) Validate() error {
	if t.Silo != SiloCell && t.Silo != SiloControl {
		return fmt.Errorf("invalid silo %q: valid values are cell and control", t.Silo)
	}
	if t.Cell != "" && t.Silo != SiloControl {
		return fmt.Errorf("`--cell` filters the control outbox; add `--silo control`")
	}
	if t.Table != "" {
		if err := ValidateIdent("table", t.Table); err != nil {
			return err
		}
	}
	if t.Schema != "" {
		if err := ValidateIdent("schema", t.Schema); err != nil {
			return err
		}
	}
	if t.CellColumn != "" {
		if err := ValidateIdent("column", t.CellColumn); err != nil {
			return err
		}
	}
	if t.Cell != "" {
		if _, err := quoteString(t.Cell); err != nil {
			return fmt.Errorf("`--cell`: %w", err)
		}
	}
	return nil
}

// TableName is the unqualified table name.
func (t Target) TableName() string {
	switch {
	case t.Table != "":
		return t.Table
	case t.Silo == SiloControl:
		return ControlTable
	default:
		return CellTable
	}
}

// From is the table as written in SQL: schema-qualified when a schema is set, each part
// quoted only when it must be.
func (t Target) From() string {
	if t.Schema != "" {
		return Ident(t.Schema) + "." + Ident(t.TableName())
	}
	return Ident(t.TableName())
}

// Control reports whether the target is keyed by cell as well as by shard.
func (t Target) Control() bool { return t.Silo == SiloControl }

// CellColumnName is the control outbox's cell column as it is named (region_name unless
// introspection found otherwise), for reading it from results by name.
func (t Target) CellColumnName() string {
	if t.CellColumn != "" {
		return t.CellColumn
	}
	return DefaultCellColumn
}

// cellCol is the cell column quoted for SQL.
func (t Target) cellCol() string { return Ident(t.CellColumnName()) }

// Describe names the table for comment headers.
func (t Target) Describe() string {
	d := fmt.Sprintf("%s (%s silo)", t.From(), t.Silo)
	if t.Cell != "" {
		lit, _ := quoteString(t.Cell)
		d += ", cell " + lit
	}
	return d
}

// Enum is an integer together with its registry name, for predicates and their notes.
type Enum struct {
	Value int
	Name  string
}

func (e *Enum) note() string { return e.Name }

// ScopeWord is a scope as a command's SCOPE argument: ORGANIZATION_SCOPE -> organization,
// and the integer for a scope without a name or one this build does not know (UNKNOWN(7)).
func (e Enum) ScopeWord() string {
	if e.Name == "" || strings.HasPrefix(e.Name, "UNKNOWN(") {
		return strconv.Itoa(e.Value)
	}
	return strings.ToLower(strings.TrimSuffix(e.Name, "_SCOPE"))
}

// DefaultLimit caps the rows of any list that can be large.
const DefaultLimit = 20

func limitOrDefault(n int) int {
	if n <= 0 {
		return DefaultLimit
	}
	return n
}
