package drain

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ArchivedRow is one line of the previous release's archive format (no operation, no commit
// marker, payload as re-encoded JSON). Nothing writes it any more;
// ReadArchiveFile reads it, with LegacyLimits stated.
type ArchivedRow struct {
	Schema        string          `json:"schema,omitempty"`
	Table         string          `json:"table"`
	ID            int64           `json:"id"`
	ShardScope    int             `json:"shard_scope"`
	ShardID       int64           `json:"shard_identifier"`
	Category      int             `json:"category"`
	ObjectID      int64           `json:"object_identifier"`
	Cell          *string         `json:"region_name,omitempty"`
	Payload       json.RawMessage `json:"payload"` // JSON as stored (a text column's text as a JSON string when not JSON)
	ScheduledFrom time.Time       `json:"scheduled_from"`
	ScheduledFor  time.Time       `json:"scheduled_for"`
	DateAdded     time.Time       `json:"date_added"`
	ArchivedAt    time.Time       `json:"archived_at"`
	Command       string          `json:"command"`
	Reason        string          `json:"reason,omitempty"`
}

// DefaultArchivePath is under the user's state directory
// ($XDG_STATE_HOME/outboxctl, else ~/.local/state/outboxctl), one file per day: the previous
// release's default. OperationArchivePath gives an operation its own file there.
func DefaultArchivePath(now time.Time) (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding a state directory for the archive: %w; pass --archive FILE", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "outboxctl", "archive-"+now.UTC().Format("2006-01-02")+".jsonl"), nil
}
