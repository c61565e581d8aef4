package drain

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ArchivedRow is one line of the previous release's archive format (no operation, no commit
// marker, payload as re-encoded JSON). The drain still writes it through Archive until it
// moves to Operation (operation.go); ReadArchiveFile reads it with LegacyLimits stated.
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

// Archive appends rows in the previous format; new code uses OpenOperation.
type Archive struct {
	Path string
	f    *os.File
	w    *bufio.Writer
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

// OpenArchive opens (creating) an archive for appending.
func OpenArchive(path string) (*Archive, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the archive directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the archive: %w", err)
	}
	return &Archive{Path: path, f: f, w: bufio.NewWriter(f)}, nil
}

// Append writes rows and syncs them: only then may the caller delete them.
func (a *Archive) Append(rows []ArchivedRow) error {
	enc := json.NewEncoder(a.w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("writing the archive: %w", err)
		}
	}
	if err := a.w.Flush(); err != nil {
		return fmt.Errorf("writing the archive: %w", err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("syncing the archive: %w", err)
	}
	return nil
}

// Close closes the file.
func (a *Archive) Close() error {
	if err := a.w.Flush(); err != nil {
		return err
	}
	return a.f.Close()
}

// ReadArchive reads every row of a previous-format archive (restore uses ReadArchiveFile).
func ReadArchive(path string) ([]ArchivedRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the archive: %w", err)
	}
	defer f.Close()
	var out []ArchivedRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r ArchivedRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: not an archived row: %w", path, line, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
