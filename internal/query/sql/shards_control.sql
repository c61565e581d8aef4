-- The shard listings of the control silo (sql/shards.sql has the cell silo's, and says what
-- each statement answers): the same statements, every shard keyed by its cell first (the
-- cell column, region_name or cell_name, leads the control outbox's indexes), and --cell
-- (@cell) a filter of its own.

-- name: top-shards-control
-- top-shards (sql/shards.sql) in the control silo.
WITH per_shard AS (
    -- Each shard's depth: the guide's template without its sort (both forms read it; the
    -- planner folds it into the statement, the plan is the same as written out).
    SELECT o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: scope */WHERE o.shard_scope = @scope/* END: scope */
       /* IF: shard */AND o.shard_identifier = @shard/* END: shard */
       /* IF: category */AND o.category = @category/* END: category */
       /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       /* IF: selected */AND (o./* TEMPLATE: cell_column */region_name::text, o.shard_scope, o.shard_identifier) IN (SELECT s.cell, s.shard_scope, s.shard_identifier FROM (
/* TEMPLATE_BEGIN: selected */SELECT NULL::text AS cell, 0 AS shard_scope, 0::bigint AS shard_identifier/* TEMPLATE_END: selected */
           ) s)/* END: selected */
     GROUP BY o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier
    /* IF: min_depth */HAVING count(*) >= @min_depth/* END: min_depth */
),
/* IF: estimated */shard_estimate AS (
    -- The planner's estimate of the shards, from its statistics (no row read): the product
    -- of the distinct values pg_stats has for the shard key's columns a filter leaves open
    -- (@key_columns), at most the table's rows, as the planner estimates a GROUP BY of them.
    SELECT least(c.reltuples, exp(sum(ln(greatest(CASE WHEN s.n_distinct < 0 THEN -s.n_distinct * c.reltuples ELSE s.n_distinct END, 1)))))::bigint AS shards
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname
     WHERE c.oid = to_regclass(@table)
       AND s.attname = ANY (@key_columns::text[])
     GROUP BY c.reltuples
),
/* END: estimated *//* EITHER: window */top AS (
    -- total_shards: how many shards matched before the LIMIT (the footer's "of N"), unless
    -- estimated.
    SELECT d./* TEMPLATE: cell_column */region_name, d.shard_scope, d.shard_identifier, d.depth/* IF: exact_total */, count(*) OVER () AS total_shards/* END: exact_total */
      FROM per_shard d
     ORDER BY d.depth DESC, d./* TEMPLATE: cell_column */region_name, d.shard_scope, d.shard_identifier
     LIMIT @limit
)/* OR: kept AS (
    -- total_shards: every shard counted (the footer's "of N"); kept for the top: only the
    -- shards at least as deep as the floor.
    SELECT count(*) AS total_shards,
           array_agg(d./* TEMPLATE: cell_column */region_name) FILTER (WHERE d.depth >= @floor) AS cells,
           array_agg(d.shard_scope) FILTER (WHERE d.depth >= @floor) AS scopes,
           array_agg(d.shard_identifier) FILTER (WHERE d.depth >= @floor) AS shards,
           array_agg(d.depth) FILTER (WHERE d.depth >= @floor) AS depths
      FROM per_shard d
),
top AS (
    SELECT u./* TEMPLATE: cell_column */region_name, u.shard_scope, u.shard_identifier, u.depth, k.total_shards
      FROM kept k
     CROSS JOIN LATERAL unnest(k.cells, k.scopes, k.shards, k.depths) AS u(/* TEMPLATE: cell_column */region_name, shard_scope, shard_identifier, depth)
     ORDER BY u.depth DESC, u./* TEMPLATE: cell_column */region_name, u.shard_scope, u.shard_identifier
     LIMIT @limit
) */
SELECT top./* TEMPLATE: cell_column */region_name, top.shard_scope, top.shard_identifier, top.depth,
       /* EITHER: capped */CASE WHEN top.depth <= @one_pass_rows
       THEN (SELECT count(*) FROM (
                SELECT DISTINCT o.category, o.object_identifier
                  FROM /* TEMPLATE: table */sentry_controloutbox o
                 WHERE o./* TEMPLATE: cell_column */region_name = top./* TEMPLATE: cell_column */region_name
                   AND o.shard_scope = top.shard_scope
                   AND o.shard_identifier = top.shard_identifier
                   /* IF: category */AND o.category = @category/* END: category */
                 ORDER BY o.category, o.object_identifier
                 LIMIT @group_cap) g)
       ELSE (WITH RECURSIVE g AS (
          (SELECT o.category, o.object_identifier, 1 AS n
             FROM /* TEMPLATE: table */sentry_controloutbox o
            WHERE o./* TEMPLATE: cell_column */region_name = top./* TEMPLATE: cell_column */region_name
              AND o.shard_scope = top.shard_scope
              AND o.shard_identifier = top.shard_identifier
              /* IF: category */AND o.category = @category/* END: category */
            ORDER BY o.category, o.object_identifier
            LIMIT 1)
          UNION ALL
          SELECT nx.category, nx.object_identifier, g.n + 1
            FROM g
           CROSS JOIN LATERAL (
              SELECT o.category, o.object_identifier
                FROM /* TEMPLATE: table */sentry_controloutbox o
               WHERE o./* TEMPLATE: cell_column */region_name = top./* TEMPLATE: cell_column */region_name
                 AND o.shard_scope = top.shard_scope
                 AND o.shard_identifier = top.shard_identifier
                 AND (o.category, o.object_identifier) > (g.category, g.object_identifier)
                 /* IF: category */AND o.category = @category/* END: category */
               ORDER BY o.category, o.object_identifier
               LIMIT 1
           ) nx
           WHERE g.n < @group_cap)
        SELECT count(*) FROM g) END/* OR: (SELECT count(*) FROM (SELECT DISTINCT o.category, o.object_identifier
                                FROM /* TEMPLATE: table */sentry_controloutbox o
                               WHERE o./* TEMPLATE: cell_column */region_name = top./* TEMPLATE: cell_column */region_name
                                 AND o.shard_scope = top.shard_scope
                                 AND o.shard_identifier = top.shard_identifier/* IF: category */
                                 AND o.category = @category/* END: category */) g) */ AS coalesce_groups,
       CASE WHEN top.depth <= @one_pass_rows
       THEN ARRAY(SELECT DISTINCT o.category
                    FROM /* TEMPLATE: table */sentry_controloutbox o
                   WHERE o./* TEMPLATE: cell_column */region_name = top./* TEMPLATE: cell_column */region_name
                     AND o.shard_scope = top.shard_scope
                     AND o.shard_identifier = top.shard_identifier
                     /* IF: category */AND o.category = @category/* END: category */
                   ORDER BY o.category)
       ELSE ARRAY(WITH RECURSIVE c AS (
               (SELECT o.category
                  FROM /* TEMPLATE: table */sentry_controloutbox o
                 WHERE o./* TEMPLATE: cell_column */region_name = top./* TEMPLATE: cell_column */region_name
                   AND o.shard_scope = top.shard_scope
                   AND o.shard_identifier = top.shard_identifier
                   /* IF: category */AND o.category = @category/* END: category */
                 ORDER BY o.category
                 LIMIT 1)
               UNION ALL
               SELECT nx.category
                 FROM c
                CROSS JOIN LATERAL (
                   SELECT o.category
                     FROM /* TEMPLATE: table */sentry_controloutbox o
                    WHERE o./* TEMPLATE: cell_column */region_name = top./* TEMPLATE: cell_column */region_name
                      AND o.shard_scope = top.shard_scope
                      AND o.shard_identifier = top.shard_identifier
                      AND o.category > c.category
                      /* IF: category */AND o.category = @category/* END: category */
                    ORDER BY o.category
                    LIMIT 1
                ) nx)
             SELECT c.category FROM c) END AS categories,
       n.next_attempt, n.next_attempt <= now() AS due,
       head.last_delay_seconds, head.last_attempt, head.oldest_message,
       /* EITHER: exact_total */top.total_shards, true AS total_exact/* OR: CASE WHEN count(*) OVER () < @limit THEN count(*) OVER ()
            ELSE greatest(count(*) OVER (), (SELECT e.shards FROM shard_estimate e)) END AS total_shards,
       count(*) OVER () < @limit AS total_exact */
  FROM top
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE o./* TEMPLATE: cell_column */region_name = top./* TEMPLATE: cell_column */region_name
       AND o.shard_scope = top.shard_scope
       AND o.shard_identifier = top.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 CROSS JOIN LATERAL (
    SELECT CASE WHEN o.scheduled_for >= o.scheduled_from THEN extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 END AS last_delay_seconds, -- NULL: never attempted
           o.scheduled_from AS last_attempt,
           o.date_added AS oldest_message
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE o./* TEMPLATE: cell_column */region_name = top./* TEMPLATE: cell_column */region_name
       AND o.shard_scope = top.shard_scope
       AND o.shard_identifier = top.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 ORDER BY top.depth DESC, top./* TEMPLATE: cell_column */region_name, top.shard_scope, top.shard_identifier;

-- name: top-shards-floor-control
-- top-shards-floor (sql/shards.sql) in the control silo.
WITH sampled AS (
    SELECT o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier, count(*) AS seen
      FROM /* TEMPLATE: table */sentry_controloutbox o TABLESAMPLE SYSTEM ((@hundredths::float8 / 100)::real) REPEATABLE (@seed::float8)
     /* IF: scope */WHERE o.shard_scope = @scope/* END: scope */
       /* IF: category */AND o.category = @category/* END: category */
       /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
     GROUP BY o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier
     ORDER BY seen DESC, o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier
     LIMIT @candidates
),
counted AS (
    SELECT (SELECT count(*) FROM (
               SELECT 1
                 FROM /* TEMPLATE: table */sentry_controloutbox o
                WHERE o./* TEMPLATE: cell_column */region_name = s./* TEMPLATE: cell_column */region_name
                  AND o.shard_scope = s.shard_scope
                  AND o.shard_identifier = s.shard_identifier
                  /* IF: category */AND o.category = @category/* END: category */
                LIMIT @cap) r) AS rows_at_least
      FROM sampled s
)
SELECT (SELECT c.rows_at_least FROM counted c ORDER BY c.rows_at_least DESC OFFSET @limit::int - 1 LIMIT 1) AS floor;

-- name: stuck-shards-control
-- stuck-shards (sql/shards.sql) in the control silo.
WITH candidates AS (
    SELECT o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE o.scheduled_for > now()
       /* IF: scope */AND o.shard_scope = @scope/* END: scope */
       /* IF: shard */AND o.shard_identifier = @shard/* END: shard */
       /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       /* IF: selected */AND (o./* TEMPLATE: cell_column */region_name::text, o.shard_scope, o.shard_identifier) IN (SELECT s.cell, s.shard_scope, s.shard_identifier FROM (
/* TEMPLATE_BEGIN: selected */SELECT NULL::text AS cell, 0 AS shard_scope, 0::bigint AS shard_identifier/* TEMPLATE_END: selected */
           ) s)/* END: selected */
     GROUP BY o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier
),
backing_off AS (
    SELECT k./* TEMPLATE: cell_column */region_name, k.shard_scope, k.shard_identifier, k.depth, h.next_attempt
      FROM candidates k
     CROSS JOIN LATERAL (
        SELECT o.scheduled_for AS next_attempt
          FROM /* TEMPLATE: table */sentry_controloutbox o
         WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
           AND o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         ORDER BY o.scheduled_for
         LIMIT 1
     ) h
     WHERE h.next_attempt > now()
       /* IF: category */AND EXISTS (SELECT 1 FROM /* TEMPLATE: table */sentry_controloutbox o
                    WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
                      AND o.shard_scope = k.shard_scope
                      AND o.shard_identifier = k.shard_identifier
                      AND o.category = @category)/* END: category */
),
ranked AS (
    -- total_shards: how many shards are backing off before the LIMIT (the footer's "of N").
    SELECT k.*, count(*) OVER () AS total_shards
      FROM backing_off k
     /* IF: min_depth */WHERE k.depth >= @min_depth/* END: min_depth */
     ORDER BY k.depth DESC, k./* TEMPLATE: cell_column */region_name, k.shard_scope, k.shard_identifier
     LIMIT @limit
)
SELECT k./* TEMPLATE: cell_column */region_name, k.shard_scope, k.shard_identifier, k.depth,
       /* EITHER: capped */CASE WHEN k.depth <= @one_pass_rows
       THEN (SELECT count(*) FROM (
                SELECT DISTINCT o.category, o.object_identifier
                  FROM /* TEMPLATE: table */sentry_controloutbox o
                 WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
                   AND o.shard_scope = k.shard_scope
                   AND o.shard_identifier = k.shard_identifier
                 ORDER BY o.category, o.object_identifier
                 LIMIT @group_cap) g)
       ELSE (WITH RECURSIVE g AS (
          (SELECT o.category, o.object_identifier, 1 AS n
             FROM /* TEMPLATE: table */sentry_controloutbox o
            WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
              AND o.shard_scope = k.shard_scope
              AND o.shard_identifier = k.shard_identifier
            ORDER BY o.category, o.object_identifier
            LIMIT 1)
          UNION ALL
          SELECT nx.category, nx.object_identifier, g.n + 1
            FROM g
           CROSS JOIN LATERAL (
              SELECT o.category, o.object_identifier
                FROM /* TEMPLATE: table */sentry_controloutbox o
               WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
                 AND o.shard_scope = k.shard_scope
                 AND o.shard_identifier = k.shard_identifier
                 AND (o.category, o.object_identifier) > (g.category, g.object_identifier)
               ORDER BY o.category, o.object_identifier
               LIMIT 1
           ) nx
           WHERE g.n < @group_cap)
        SELECT count(*) FROM g) END/* OR: (SELECT count(*) FROM (SELECT DISTINCT o.category, o.object_identifier
                                FROM /* TEMPLATE: table */sentry_controloutbox o
                               WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
                                 AND o.shard_scope = k.shard_scope
                                 AND o.shard_identifier = k.shard_identifier) g) */ AS coalesce_groups,
       CASE WHEN k.depth <= @one_pass_rows
       THEN ARRAY(SELECT DISTINCT o.category
                    FROM /* TEMPLATE: table */sentry_controloutbox o
                   WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
                     AND o.shard_scope = k.shard_scope
                     AND o.shard_identifier = k.shard_identifier
                   ORDER BY o.category)
       ELSE ARRAY(WITH RECURSIVE c AS (
               (SELECT o.category
                  FROM /* TEMPLATE: table */sentry_controloutbox o
                 WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
                   AND o.shard_scope = k.shard_scope
                   AND o.shard_identifier = k.shard_identifier
                 ORDER BY o.category
                 LIMIT 1)
               UNION ALL
               SELECT nx.category
                 FROM c
                CROSS JOIN LATERAL (
                   SELECT o.category
                     FROM /* TEMPLATE: table */sentry_controloutbox o
                    WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
                      AND o.shard_scope = k.shard_scope
                      AND o.shard_identifier = k.shard_identifier
                      AND o.category > c.category
                    ORDER BY o.category
                    LIMIT 1
                ) nx)
             SELECT c.category FROM c) END AS categories,
       k.next_attempt, head.last_delay_seconds, head.last_attempt,
       head.oldest_message, k.total_shards
  FROM ranked k
 CROSS JOIN LATERAL (
    SELECT CASE WHEN o.scheduled_for >= o.scheduled_from THEN extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 END AS last_delay_seconds, -- NULL: never attempted
           o.scheduled_from AS last_attempt,
           o.date_added AS oldest_message
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 ORDER BY k.depth DESC, k./* TEMPLATE: cell_column */region_name, k.shard_scope, k.shard_identifier;

-- name: top-shards-sample-control
-- top-shards-sample (sql/shards.sql) in the control silo.
SELECT o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier,
       round(count(*) * 10000 / @hundredths::float8)::bigint AS depth, true AS estimated, @hundredths::float8 / 100 AS sampled_percent
  FROM /* TEMPLATE: table */sentry_controloutbox o TABLESAMPLE SYSTEM ((@hundredths::float8 / 100)::real) REPEATABLE (@seed::float8)
 /* IF: scope */WHERE o.shard_scope = @scope/* END: scope */
   /* IF: category */AND o.category = @category/* END: category */
   /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
 GROUP BY o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier
/* IF: min_depth */HAVING round(count(*) * 10000 / @hundredths::float8) >= @min_depth/* END: min_depth */
 ORDER BY depth DESC, o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier
 LIMIT @limit;

-- name: stuck-shards-sample-control
-- stuck-shards-sample (sql/shards.sql) in the control silo.
WITH sampled AS (
    SELECT o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier, count(*) AS sampled_rows
      FROM /* TEMPLATE: table */sentry_controloutbox o TABLESAMPLE SYSTEM ((@hundredths::float8 / 100)::real) REPEATABLE (@seed::float8)
     WHERE o.scheduled_for > now()
       /* IF: scope */AND o.shard_scope = @scope/* END: scope */
       /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
     GROUP BY o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier
)
SELECT k./* TEMPLATE: cell_column */region_name, k.shard_scope, k.shard_identifier,
       round(k.sampled_rows * 10000 / @hundredths::float8)::bigint AS depth, true AS estimated, @hundredths::float8 / 100 AS sampled_percent
  FROM sampled k
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) h
 WHERE h.next_attempt > now()
   /* IF: category */AND EXISTS (SELECT 1 FROM /* TEMPLATE: table */sentry_controloutbox o
                WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name
                  AND o.shard_scope = k.shard_scope
                  AND o.shard_identifier = k.shard_identifier
                  AND o.category = @category)/* END: category */
   /* IF: min_depth */AND round(k.sampled_rows * 10000 / @hundredths::float8) >= @min_depth/* END: min_depth */
 ORDER BY depth DESC, k./* TEMPLATE: cell_column */region_name, k.shard_scope, k.shard_identifier
 LIMIT @limit;
