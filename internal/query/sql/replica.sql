-- verify and replicate: a replication pair's source rows against its replica rows, and the
-- outbox rows replicate writes (docs/replicas.md says which Sentry code each pair comes
-- from). Every pair runs these statements: the regions (TEMPLATE_BEGIN) are the pair's
-- rows, written by internal/query/replica.go from the pair's spec (its tables, key columns,
-- the fields its receiver copies, its outbox shard and payload); as written, each region
-- holds the organization pair's, so the file runs as it stands. The set-based comparison of
-- one database (verify-pair: typed values compared) and the merge of two streams
-- (replica-source, replica-rows: the values as text, compared in Go) classify alike. The
-- cell name, the scope and category of the pair's outbox rows and the ids are bind
-- parameters.

-- name: verify-pair
-- A pair in one database (a monolith), in one statement. One pass (a FULL JOIN of the
-- source rows and the replica rows by object id) counts every class: in sync, missing (no
-- replica), stale (a field differs: the typed values compared), orphan (no source), and
-- pending (any of these with a queued outbox row of the pair's scope and category for the
-- object in the object's own shard: the source's shard, or for an orphan the replica's).
-- A pair whose replica table may hold several rows of an object (the newest fragment:
-- ApiKeyReplica, "use last()") compares the object's newest row. The same pass keeps the
-- ids of the first @listed drifted objects; those alone are read again, by id, with their
-- fields as text and their queued outbox rows. Every row carries the counts; with nothing
-- drifted there is one row, its object_id NULL.
WITH c AS (
SELECT count(*) FILTER (WHERE d.has_source AND NOT d.drifted) AS in_sync,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NULL AND NOT d.has_replica) AS missing,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NULL AND d.has_source AND d.has_replica) AS stale,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NULL AND NOT d.has_source) AS orphan,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NOT NULL) AS pending,
       (array_agg(d.object_id ORDER BY d.object_id) FILTER (WHERE d.drifted))[:@listed] AS listed
  FROM (SELECT coalesce(s.object_id, r.object_id) AS object_id,
               s.object_id IS NOT NULL AS has_source,
               r.object_id IS NOT NULL AS has_replica,
               coalesce(s.shard, r.shard) AS shard,
               s.object_id IS NULL OR r.object_id IS NULL
               OR /* TEMPLATE_BEGIN: differs */(s.s_slug, s.s_name) IS DISTINCT FROM (r.r_slug, r.r_name)/* TEMPLATE_END: differs */ AS drifted
          FROM (/* TEMPLATE_BEGIN: source_rows */SELECT s.id AS object_id, s.id AS shard, s.slug AS s_slug, s.name AS s_name
                  FROM sentry_organization s/* TEMPLATE_END: source_rows */) s
          FULL JOIN (SELECT /* IF: newest */DISTINCT ON (r.object_id) /* END: newest */r.*
                       FROM (/* TEMPLATE_BEGIN: replica_rows */SELECT r.organization_id AS object_id, r.organization_id AS shard, r.id AS replica_row, r.slug AS r_slug, r.name AS r_name
                  FROM sentry_organizationmapping r
                 WHERE r.organization_id IS NOT NULL/* TEMPLATE_END: replica_rows */) r
                     /* IF: newest */ORDER BY r.object_id, r.replica_row DESC/* END: newest */) r
            ON r.object_id = s.object_id
        OFFSET 0) d -- computes drifted once a row (flattened, the aggregate would repeat it in every FILTER)
  LEFT JOIN (SELECT DISTINCT x.shard_identifier, x.object_identifier
               FROM /* TEMPLATE: outbox */sentry_regionoutbox x
              WHERE x.shard_scope = @scope
                AND x.category = @category
                /* IF: ids */AND x.object_identifier = ANY (@ids::bigint[])/* END: ids */) p
         ON p.object_identifier = d.object_id AND p.shard_identifier = d.shard AND d.drifted
)
SELECT c.in_sync, c.missing, c.stale, c.orphan, c.pending, l.*
  FROM c
  LEFT JOIN LATERAL (
        SELECT k.object_id, s.object_id IS NOT NULL AS has_source, r.object_id IS NOT NULL AS has_replica,
               /* TEMPLATE_BEGIN: values */s.s_slug::text AS s_slug, r.r_slug::text AS r_slug, s.s_name::text AS s_name, r.r_name::text AS r_name/* TEMPLATE_END: values */,
               p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
          FROM unnest(c.listed) AS k(object_id)
          LEFT JOIN (/* TEMPLATE_BEGIN: source_rows */SELECT s.id AS object_id, s.id AS shard, s.slug AS s_slug, s.name AS s_name
                  FROM sentry_organization s/* TEMPLATE_END: source_rows */) s ON s.object_id = k.object_id
          LEFT JOIN (SELECT /* IF: newest */DISTINCT ON (r.object_id) /* END: newest */r.*
                       FROM (/* TEMPLATE_BEGIN: replica_rows */SELECT r.organization_id AS object_id, r.organization_id AS shard, r.id AS replica_row, r.slug AS r_slug, r.name AS r_name
                  FROM sentry_organizationmapping r
                 WHERE r.organization_id IS NOT NULL/* TEMPLATE_END: replica_rows */) r
                     /* IF: newest */ORDER BY r.object_id, r.replica_row DESC/* END: newest */) r ON r.object_id = k.object_id
          LEFT JOIN LATERAL (SELECT x.shard_identifier, count(*) AS pending_rows, min(x.scheduled_for) AS pending_next,
                                    min(x.scheduled_for) <= now() AS pending_due
                               FROM /* TEMPLATE: outbox */sentry_regionoutbox x
                              WHERE x.shard_scope = @scope
                                AND x.category = @category
                                AND x.shard_identifier = coalesce(s.shard, r.shard)
                                AND x.object_identifier = k.object_id
                              GROUP BY x.shard_identifier) p ON true
       ) l ON true
 ORDER BY l.object_id;

-- name: replica-source
-- The source's side of a pair when the two silos are two databases: every source row with
-- its replicated fields as text and its queued outbox rows in its own shard, and, one row
-- per shard, the objects with queued rows and no source row (a deletion not yet delivered:
-- the merge keeps the one in the replica's shard), in object order, the source's row first.
-- A control outbox's rows are the cell's (region_name; as written, the cell outbox's).
SELECT coalesce(s.object_id, p.object_identifier) AS object_id,
       s.object_id IS NOT NULL AS has_source,
       /* TEMPLATE_BEGIN: source_text */s.s_slug::text AS s_slug, s.s_name::text AS s_name/* TEMPLATE_END: source_text */,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (/* TEMPLATE_BEGIN: source_rows */SELECT s.id AS object_id, s.id AS shard, s.slug AS s_slug, s.name AS s_name
                  FROM sentry_organization s/* TEMPLATE_END: source_rows */) s
  FULL JOIN (SELECT x.shard_identifier, x.object_identifier, count(*) AS pending_rows,
                    min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
               FROM /* TEMPLATE: outbox */sentry_regionoutbox x
              WHERE x.shard_scope = @scope
                AND x.category = @category
                /* EITHER: cell_outbox *//* OR: AND x.region_name = @cell */
                /* IF: ids */AND x.object_identifier = ANY (@ids::bigint[])/* END: ids */
              GROUP BY x.shard_identifier, x.object_identifier) p
         ON p.object_identifier = s.object_id AND p.shard_identifier = s.shard
 ORDER BY 1, 2 DESC, pending_shard;

-- name: replica-rows
-- The replica's side of a pair when the two silos are two databases: the cell's replica
-- rows (the pair's cell scope) with their shard and their fields as text, in object order,
-- the newest row of an object first.
SELECT r.object_id, r.shard AS r_shard,
       /* TEMPLATE_BEGIN: replica_text */r.r_slug::text AS r_slug, r.r_name::text AS r_name/* TEMPLATE_END: replica_text */
  FROM (/* TEMPLATE_BEGIN: replica_rows */SELECT r.organization_id AS object_id, r.organization_id AS shard, r.id AS replica_row, r.slug AS r_slug, r.name AS r_name
                  FROM sentry_organizationmapping r
                 WHERE r.organization_id IS NOT NULL/* TEMPLATE_END: replica_rows */) r
 ORDER BY r.object_id, r.replica_row DESC;

-- name: replicate-source
-- The objects named that exist, with the identifiers Sentry's outbox_for_update() gives
-- them: the shard infer_identifiers gives (ORGANIZATION_SCOPE: the organization) and the
-- values of payload_for_update()'s keys (p_<key>).
SELECT s.object_id, s.shard AS shard_identifier/* TEMPLATE_BEGIN: payload *//* TEMPLATE_END: payload */
  FROM (/* TEMPLATE_BEGIN: source_rows */SELECT s.id AS object_id, s.id AS shard
                  FROM sentry_organization s/* TEMPLATE_END: source_rows */) s
 ORDER BY s.object_id;

-- name: replicate-replica
-- The replicas of objects that are gone: their deletion outbox names the shard and payload
-- the object had, which its replica holds (the newest replica row of an object first).
SELECT r.object_id, r.shard AS shard_identifier/* TEMPLATE_BEGIN: payload *//* TEMPLATE_END: payload */
  FROM (/* TEMPLATE_BEGIN: replica_rows */SELECT r.organization_id AS object_id, r.organization_id AS shard, r.id AS replica_row
                  FROM sentry_organizationmapping r
                 WHERE r.organization_id IS NOT NULL/* TEMPLATE_END: replica_rows */) r
 ORDER BY r.object_id, r.replica_row DESC;

-- name: replica-part-source-rows
-- A pair's source rows, the part the statements above read them through (their
-- source_rows region): the object's id, its outbox shard (what infer_identifiers gives)
-- and the columns asked (the fields typed, s_<field>; the payload's values, p_<key>), with
-- the rows the source references joined (an OrganizationMemberTeam's member); @ids, and a
-- cell's scope (a control -> cell pair's sources of one cell: by a cell column, by the
-- organization's mapping, or by the user's memberships' organizations, as
-- find_cells_for_orgs and find_cells_for_user decide) as the pair has one.
SELECT s./* TEMPLATE: source_key */id::bigint AS object_id, (/* TEMPLATE_BEGIN: shard */s.id/* TEMPLATE_END: shard */)::bigint AS shard/* TEMPLATE_BEGIN: columns */, s.slug AS s_slug/* TEMPLATE_END: columns */
                  FROM /* TEMPLATE: source */sentry_organization s/* TEMPLATE_BEGIN: joins *//* TEMPLATE_END: joins */
                 /* IF: ids */WHERE s./* TEMPLATE: source_key */id = ANY (@ids::bigint[])/* END: ids */
                   /* IF: cell_column */AND s./* TEMPLATE: cell_column */region_name = @cell/* END: cell_column */
                   /* IF: cell_org */AND EXISTS (SELECT 1 FROM /* TEMPLATE: org_mapping */sentry_organizationmapping om WHERE om.organization_id = /* TEMPLATE: org_row */s./* TEMPLATE: org_column */organization_id AND om.region_name = @cell)/* END: cell_org */
                   /* IF: cell_user */AND EXISTS (SELECT 1 FROM /* TEMPLATE: member_mapping */sentry_organizationmembermapping omm JOIN /* TEMPLATE: org_mapping */sentry_organizationmapping om ON om.organization_id = omm.organization_id WHERE omm.user_id = s./* TEMPLATE: user_column */user_id AND om.region_name = @cell)/* END: cell_user */

-- name: replica-part-join
-- A row a pair's source references, joined beside it (replica-part-source-rows' joins).
LEFT JOIN /* TEMPLATE: table */sentry_organizationmember /* TEMPLATE: alias */m ON /* TEMPLATE: alias */m./* TEMPLATE: key */id = s./* TEMPLATE: from */organizationmember_id

-- name: replica-part-replica-rows
-- A pair's replica rows that carry an object id (the statements' replica_rows region): the
-- object's id, its shard, the replica row's own id (the newest of an object first) and the
-- columns asked (r_<field>, p_<key>); @ids, and a cell's scope when the silos are two
-- databases: the rows naming the cell, or those whose organization's mapping names it.
SELECT r./* TEMPLATE: replica_key */organization_id::bigint AS object_id, r./* TEMPLATE: replica_shard */organization_id::bigint AS shard, r.id AS replica_row/* TEMPLATE_BEGIN: columns */, r.slug AS r_slug/* TEMPLATE_END: columns */
                  FROM /* TEMPLATE: replica */sentry_organizationmapping r
                 WHERE r./* TEMPLATE: replica_key */organization_id IS NOT NULL
                   /* IF: ids */AND r./* TEMPLATE: replica_key */organization_id = ANY (@ids::bigint[])/* END: ids */
                   /* IF: cell_column */AND r./* TEMPLATE: cell_column */region_name = @cell/* END: cell_column */
                   /* IF: cell_org */AND EXISTS (SELECT 1 FROM /* TEMPLATE: org_mapping */sentry_organizationmapping om WHERE om.organization_id = /* TEMPLATE: org_row */r./* TEMPLATE: org_column */organization_id AND om.region_name = @cell)/* END: cell_org */
                   /* IF: cell_user */AND EXISTS (SELECT 1 FROM /* TEMPLATE: member_mapping */sentry_organizationmembermapping omm JOIN /* TEMPLATE: org_mapping */sentry_organizationmapping om ON om.organization_id = omm.organization_id WHERE omm.user_id = r./* TEMPLATE: user_column */user_id AND om.region_name = @cell)/* END: cell_user */

-- name: replica-columns
-- The columns of the pair's tables (@tables, qualified names): a field whose column a
-- database does not have yet (a Sentry from before it) is not compared.
SELECT t.name AS table_name, a.attname::text AS column_name
  FROM unnest(@tables::text[]) AS t(name)
  JOIN pg_attribute a ON a.attrelid = to_regclass(t.name)
                     AND a.attnum > 0
                     AND NOT a.attisdropped
 ORDER BY 1, 2;

-- name: replica-unkeyed
-- How many replica rows name no object: their key column is NULL (member mappings written
-- before Sentry keyed them by organizationmember_id). Sentry's receiver finds a replica by
-- that key only, so it neither reads nor updates them, and verify cannot match them either:
-- they are counted in the summary's not_compared, not classified.
SELECT count(*) AS unkeyed
  FROM /* TEMPLATE: replica */sentry_organizationmembermapping r
 WHERE r./* TEMPLATE: key */organizationmember_id IS NULL;

-- name: replicate-outbox
-- The outbox rows Sentry's outbox_for_update() saves, one per object: the pair's scope and
-- category, the object's shard and id, its payload ('' for none: SQL NULL), and a fresh
-- row's schedule (scheduled_from and date_added now, scheduled_for THE_PAST), so the shard
-- is due at the next scheduler run.
INSERT INTO /* TEMPLATE: outbox */sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT @scope::integer, x.shard, @category::integer, x.object, CAST(NULLIF(x.payload, '') AS /* TEMPLATE: payload_type */jsonb), now(), @the_past::timestamptz, now()
  FROM unnest(@shards::bigint[], @objects::bigint[], @payloads::text[]) AS x(shard, object, payload)
RETURNING id, shard_identifier, object_identifier;

-- name: replicate-outbox-control
-- The control outbox rows Sentry's outboxes_for_update() saves for a control model: one per
-- object and target cell (region_name, as outbox_cell_names() decides), the pair's scope and
-- category, the object's shard and id, its payload, and a fresh row's schedule.
INSERT INTO /* TEMPLATE: outbox */sentry_controloutbox (region_name, shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT x.cell, @scope::integer, x.shard, @category::integer, x.object, CAST(NULLIF(x.payload, '') AS /* TEMPLATE: payload_type */jsonb), now(), @the_past::timestamptz, now()
  FROM unnest(@cells::text[], @shards::bigint[], @objects::bigint[], @payloads::text[]) AS x(cell, shard, object, payload)
RETURNING id, shard_identifier, object_identifier;

-- name: replica-sample
-- doctor: a cheap sample of organization -> organizationmapping, the pair self-hosted
-- operators report (an empty mapping table after an upgrade): the @sample oldest
-- organizations (the first, a self-hosted install's own, among them) and the @sample newest
-- (two probes of the primary key), how many have no mapping.
SELECT count(*) AS sampled,
       count(*) FILTER (WHERE m.organization_id IS NULL) AS missing
  FROM ((SELECT o.id FROM /* TEMPLATE: source */sentry_organization o ORDER BY o.id LIMIT @sample)
        UNION
        (SELECT o.id FROM /* TEMPLATE: source */sentry_organization o ORDER BY o.id DESC LIMIT @sample)) s
  LEFT JOIN /* TEMPLATE: replica */sentry_organizationmapping m ON m.organization_id = s.id;
