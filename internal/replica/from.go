package replica

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// MaxFromBytes caps a --from file: verify's JSON of a million drifted objects is about
// 200 MB; a larger file is refused before it is parsed.
const MaxFromBytes = 512 << 20

// fromRow is the part of one of verify's drift rows replicate reads.
type fromRow struct {
	Pair     string `json:"pair"`
	Drift    string `json:"drift"`
	ObjectID *int64 `json:"object_id"`
	Would    string `json:"would_be"`
}

// FromFile reads the drifted objects of verify's output (-o json: the {"summary", "drift"}
// object, or the drift array alone; -o jsonl: one row a line) whose drift is one of classes
// (a pending object's would_be counts as its class only with "pending" among them), grouped by
// pair in the pairs' order, each pair's ids in file order without repeats.
func FromFile(r io.Reader, classes []string) (map[string][]int64, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFromBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFromBytes {
		return nil, fmt.Errorf("the file is larger than %d MiB: split it by pair (verify PAIR -o json)", MaxFromBytes>>20)
	}
	rows, err := parseRows(data)
	if err != nil {
		return nil, err
	}
	out := map[string][]int64{}
	for i, row := range rows {
		if row.ObjectID == nil || row.Pair == "" || row.Drift == "" {
			return nil, fmt.Errorf("row %d has no pair, drift or object_id: not verify's JSON", i+1)
		}
		if *row.ObjectID < 0 {
			// As the command line checks an ID: a negative one would be written as a shard.
			return nil, fmt.Errorf("row %d: object_id %d is not an id: want a non-negative integer", i+1, *row.ObjectID)
		}
		p, err := Lookup(row.Pair)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i+1, err)
		}
		if !slices.Contains(classes, row.Drift) || slices.Contains(out[p.Name], *row.ObjectID) {
			continue
		}
		out[p.Name] = append(out[p.Name], *row.ObjectID)
	}
	return out, nil
}

func parseRows(data []byte) ([]fromRow, error) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return nil, nil
	case trimmed[0] == '[':
		var rows []fromRow
		if err := json.Unmarshal(trimmed, &rows); err != nil {
			return nil, fmt.Errorf("not verify's JSON: %w", err)
		}
		return rows, nil
	case trimmed[0] == '{' && !bytes.Contains(trimmed, []byte("\n{")):
		var doc struct {
			Drift json.RawMessage `json:"drift"`
		}
		if err := json.Unmarshal(trimmed, &doc); err != nil {
			return nil, fmt.Errorf("not verify's JSON: %w", err)
		}
		// -o json's {"summary", "drift": [...]}; a one-line -o jsonl (a drift row, whose
		// "drift" is its class) is read below.
		if d := bytes.TrimSpace(doc.Drift); len(d) > 0 && d[0] == '[' {
			var rows []fromRow
			if err := json.Unmarshal(d, &rows); err != nil {
				return nil, fmt.Errorf("not verify's JSON: %w", err)
			}
			return rows, nil
		}
	}
	// JSONL: one drift row a line (summary rows, with no drift, are skipped).
	var rows []fromRow
	sc := bufio.NewScanner(bytes.NewReader(trimmed))
	sc.Buffer(make([]byte, 64<<10), MaxFromBytes)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var row fromRow
		if err := json.Unmarshal(line, &row); err != nil {
			return nil, fmt.Errorf("line %d is not verify's JSON: %w", n, err)
		}
		if row.Drift != "" {
			rows = append(rows, row)
		}
	}
	return rows, sc.Err()
}
