package sentrysim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/options"
)

// Row is an outbox row to insert as Sentry writes one (§8.3): scheduled_for = THE_PAST,
// scheduled_from = date_added = DateAdded (the virtual time of the save, required).
type Row struct {
	Key       GroupKey
	Payload   *string // nil is SQL NULL
	DateAdded time.Time
}

// payloadType reads the payload column's type (text before Aug 2025, jsonb after, §1.2).
func (s *Sim) payloadType(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptype != "" {
		return s.ptype, nil
	}
	err := s.pool.QueryRow(ctx, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'payload'",
		s.t).Scan(&s.ptype)
	return s.ptype, err
}

// insert runs INSERT … SELECT from source (which yields s, i, c, o, p, d, r, ordered), with
// Sentry's defaults for the schedule, and returns the new ids in ascending order.
func (s *Sim) insert(ctx context.Context, source string, args ...any) ([]int64, error) {
	pt, err := s.payloadType(ctx)
	if err != nil {
		return nil, err
	}
	cols, vals := "", ""
	if s.control {
		cols, vals = ", region_name", ", r"
	}
	q := fmt.Sprintf(`INSERT INTO %s (shard_scope, shard_identifier, category, object_identifier, payload,
		scheduled_from, scheduled_for, date_added%s)
		SELECT s, i, c, o, p::%s, d, $1, d%s FROM (%s) AS src RETURNING id`, s.t, cols, pt, vals, source)
	rows, err := s.pool.Query(ctx, q, append([]any{ThePast}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("seeding %s: %w", s.table, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	slices.Sort(ids)
	return ids, err
}

// Insert inserts rows in one statement, ids ascending in the order given.
func (s *Sim) Insert(ctx context.Context, rows ...Row) ([]int64, error) {
	var sc, cat []int32
	var sh, obj []int64
	var pay []*string
	var at []time.Time
	var cell []string
	for _, r := range rows {
		if r.DateAdded.IsZero() {
			return nil, errors.New("sentrysim: Row.DateAdded is required (the virtual time of the save)")
		}
		sc, sh, cat, obj = append(sc, int32(r.Key.Scope)), append(sh, r.Key.ID), append(cat, int32(r.Key.Category)), append(obj, r.Key.Object)
		pay, at, cell = append(pay, r.Payload), append(at, r.DateAdded), append(cell, r.Key.Cell)
	}
	return s.insert(ctx, `SELECT s, i, c, o, p, d, r FROM unnest($2::int[], $3::bigint[], $4::int[], $5::bigint[], $6::text[],
		$7::timestamptz[], $8::text[]) WITH ORDINALITY AS u(s, i, c, o, p, d, r, n) ORDER BY n`, sc, sh, cat, obj, pay, at, cell)
}

// InsertGroup inserts n rows of one coalesce group in one statement (a hot group of 20,000
// rows in well under a second): r.Payload for each, with "{n}" replaced by the row's number
// 1..n, so the newest row's payload is told apart. It returns the first and last ids.
func (s *Sim) InsertGroup(ctx context.Context, r Row, n int) (first, last int64, err error) {
	if r.DateAdded.IsZero() || n < 1 {
		return 0, 0, errors.New("sentrysim: InsertGroup needs Row.DateAdded and n >= 1")
	}
	ids, err := s.insert(ctx, `SELECT $2::int AS s, $3::bigint AS i, $4::int AS c, $5::bigint AS o,
		replace($6::text, '{n}', g::text) AS p, $7::timestamptz AS d, $8::text AS r FROM generate_series(1, $9::int) AS g ORDER BY g`,
		r.Key.Scope, r.Key.ID, r.Key.Category, r.Key.Object, r.Payload, r.DateAdded, r.Key.Cell, n)
	if err != nil {
		return 0, 0, err
	}
	return ids[0], ids[len(ids)-1], nil
}

// SetKillSwitch writes a kill-switch option (options.DisabledOrgShards or
// options.DisabledUserShards) into the options table the workers read, as `sentry config
// set` would: JSON integers, last_updated = at, last_updated_by = by.
func (s *Sim) SetKillSwitch(ctx context.Context, key string, shards []int64, at time.Time, by string) error {
	_, err := s.pool.Exec(ctx, "INSERT INTO "+pgx.Identifier{s.schema, s.opts.OptionsTable}.Sanitize()+
		" (key, value, last_updated, last_updated_by) VALUES ($1, $2, $3, $4)"+
		" ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, last_updated = EXCLUDED.last_updated, last_updated_by = EXCLUDED.last_updated_by",
		key, options.EncodeIDs(shards), at, by)
	return err
}

// Vacuum runs VACUUM ANALYZE on the table, as autovacuum would in production: the claims'
// pushes leave every row of a pushed shard dead once per attempt, and autovacuum is off on
// the test server, so after a long Run outboxctl's doctor reports the dead tuples.
func (s *Sim) Vacuum(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, "VACUUM ANALYZE "+s.t)
	return err
}
