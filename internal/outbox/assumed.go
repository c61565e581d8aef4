package outbox

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// CheckAssumedCell checks the cell a split command (verify, replicate: --context
// CELL,CONTROL) assumed from the cell context's name, name (it has no cell: setting and no
// --cell was given), against the cells the control silo's organization mappings name (on
// conn, in schema; control is the control silo's context): none of them is a usage error
// (every object of the cell would read missing), one of them a note saying what was
// assumed. Without the mapping table there is nothing to check it against: the note says so.
func CheckAssumedCell(ctx context.Context, conn *db.Conn, schema, name, control, command string, notef func(string, ...any)) error {
	cells, present, err := MappedCells(ctx, conn, schema)
	switch {
	case err != nil:
		return err
	case !present:
		notef("cell %q assumed: the context %s has no cell: setting (no organization mapping table in the control silo to check it against)", name, name)
	case slices.Contains(cells, name):
		notef("cell %q assumed: the context %s has no cell: setting; the control silo's organization mappings name it", name, name)
	case len(cells) == 0:
		notef("cell %q assumed: the context %s has no cell: setting (the control silo has no organization mapping yet)", name, name)
	default:
		shown := cells
		if len(shown) > 10 {
			shown = append(slices.Clip(shown[:10]), fmt.Sprintf("… %d more", len(cells)-10))
		}
		return &exitcode.Outcome{Means: exitcode.Usage, Try: "outboxctl " + textsafe.Command("--context", name+","+control, "--cell", cells[0], command),
			Msg: fmt.Sprintf("%s: the cell context %s has no cell: setting, and no organization mapping in the control silo names a cell %q (they name %s): set the context's cell (or pass --cell)",
				command, name, name, strings.Join(shown, ", "))}
	}
	return nil
}
