-- outboxctl: verify-pair
-- Drift of sentry.sentry_apikey -> sentry.hybridcloud_apikeyreplica: the count of each class (missing: no replica, orphan: no source, stale: fields differ,
-- pending: one of these with the object's outbox rows queued in its shard), then the first drifted objects with their values.
WITH c AS (
SELECT count(*) FILTER (WHERE d.has_source AND NOT d.drifted) AS in_sync,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NULL AND NOT d.has_replica) AS missing,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NULL AND d.has_source AND d.has_replica) AS stale,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NULL AND NOT d.has_source) AS orphan,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NOT NULL) AS pending,
       (array_agg(d.object_id ORDER BY d.object_id) FILTER (WHERE d.drifted))[:50] AS listed  -- drifted objects listed with their values (--limit)
  FROM (SELECT coalesce(s.object_id, r.object_id) AS object_id,
               s.object_id IS NOT NULL AS has_source,
               r.object_id IS NOT NULL AS has_replica,
               coalesce(s.shard, r.shard) AS shard,
               s.object_id IS NULL OR r.object_id IS NULL
               OR (s.s_label, s.s_allowed_origins, s.s_key)
                  IS DISTINCT FROM (r.r_label, r.r_allowed_origins, r.r_key) AS drifted
          FROM (SELECT s.id::bigint AS object_id, (s.organization_id)::bigint AS shard,
                       s.label AS s_label,
                       array_to_string(array_remove(string_to_array(coalesce(s.allowed_origins, ''), E'\n'), ''), E'\n') AS s_allowed_origins,
                       s.key AS s_key
                  FROM sentry.sentry_apikey s
                 WHERE s.id = ANY (ARRAY[7]::bigint[])) s
          FULL JOIN (SELECT DISTINCT ON (r.object_id) r.*
                       FROM (SELECT r.apikey_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.label AS r_label,
                       r.allowed_origins AS r_allowed_origins,
                       r.key AS r_key
                  FROM sentry.hybridcloud_apikeyreplica r
                 WHERE r.apikey_id IS NOT NULL
                   AND r.apikey_id = ANY (ARRAY[7]::bigint[])) r
                     ORDER BY r.object_id, r.replica_row DESC) r
            ON r.object_id = s.object_id
        OFFSET 0) d -- computes drifted once a row (flattened, the aggregate would repeat it in every FILTER)
  LEFT JOIN (SELECT DISTINCT x.shard_identifier, x.object_identifier
               FROM sentry.sentry_controloutbox x
              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                AND x.category = 28  -- API_KEY_UPDATE
                AND x.object_identifier = ANY (ARRAY[7]::bigint[])) p
         ON p.object_identifier = d.object_id AND p.shard_identifier = d.shard AND d.drifted
)
SELECT c.in_sync, c.missing, c.stale, c.orphan, c.pending, l.*
  FROM c
  LEFT JOIN LATERAL (
        SELECT k.object_id, s.object_id IS NOT NULL AS has_source, r.object_id IS NOT NULL AS has_replica,
               s.s_label::text AS s_label,
               r.r_label::text AS r_label,
               s.s_allowed_origins::text AS s_allowed_origins,
               r.r_allowed_origins::text AS r_allowed_origins,
               'digest:' || left(encode(sha256(convert_to('outboxctl:' || s.s_key::text, 'UTF8')), 'hex'), 16) AS s_key,
               'digest:' || left(encode(sha256(convert_to('outboxctl:' || r.r_key::text, 'UTF8')), 'hex'), 16) AS r_key,
               p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
          FROM unnest(c.listed) AS k(object_id)
          LEFT JOIN (SELECT s.id::bigint AS object_id, (s.organization_id)::bigint AS shard,
                       s.label AS s_label,
                       array_to_string(array_remove(string_to_array(coalesce(s.allowed_origins, ''), E'\n'), ''), E'\n') AS s_allowed_origins,
                       s.key AS s_key
                  FROM sentry.sentry_apikey s
                 WHERE s.id = ANY (ARRAY[7]::bigint[])) s ON s.object_id = k.object_id
          LEFT JOIN (SELECT DISTINCT ON (r.object_id) r.*
                       FROM (SELECT r.apikey_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.label AS r_label,
                       r.allowed_origins AS r_allowed_origins,
                       r.key AS r_key
                  FROM sentry.hybridcloud_apikeyreplica r
                 WHERE r.apikey_id IS NOT NULL
                   AND r.apikey_id = ANY (ARRAY[7]::bigint[])) r
                     ORDER BY r.object_id, r.replica_row DESC) r ON r.object_id = k.object_id
          LEFT JOIN LATERAL (SELECT x.shard_identifier, count(*) AS pending_rows, min(x.scheduled_for) AS pending_next,
                                    min(x.scheduled_for) <= now() AS pending_due
                               FROM sentry.sentry_controloutbox x
                              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                                AND x.category = 28  -- API_KEY_UPDATE
                                AND x.shard_identifier = coalesce(s.shard, r.shard)
                                AND x.object_identifier = k.object_id
                              GROUP BY x.shard_identifier) p ON true
       ) l ON true
 ORDER BY l.object_id;

-- outboxctl: replica-source
-- Source rows of ctl.sentry_apikey and the objects with queued outbox rows, in object order.
SELECT coalesce(s.object_id, p.object_identifier) AS object_id,
       s.object_id IS NOT NULL AS has_source,
       s.s_label::text AS s_label,
       s.s_allowed_origins::text AS s_allowed_origins,
       'digest:' || left(encode(sha256(convert_to('outboxctl:' || s.s_key::text, 'UTF8')), 'hex'), 16) AS s_key,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (SELECT s.id::bigint AS object_id, (s.organization_id)::bigint AS shard,
                       s.label AS s_label,
                       array_to_string(array_remove(string_to_array(coalesce(s.allowed_origins, ''), E'\n'), ''), E'\n') AS s_allowed_origins,
                       s.key AS s_key
                  FROM ctl.sentry_apikey s
                 WHERE EXISTS (SELECT 1 FROM ctl.sentry_organizationmapping om WHERE om.organization_id = s.organization_id AND om.region_name = 'x''; DROP TABLE y; --')) s  -- the cell's name (region_name)
  FULL JOIN (SELECT x.shard_identifier, x.object_identifier, count(*) AS pending_rows,
                    min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
               FROM ctl.sentry_controloutbox x
              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                AND x.category = 28  -- API_KEY_UPDATE
                AND x.region_name = 'x''; DROP TABLE y; --'  -- the cell's name (region_name)
              GROUP BY x.shard_identifier, x.object_identifier) p
         ON p.object_identifier = s.object_id AND p.shard_identifier = s.shard
 ORDER BY 1, 2 DESC, pending_shard;

-- outboxctl: replica-rows
-- Replica rows of us.hybridcloud_apikeyreplica of cell x'; DROP TABLE y; --, in object order.
SELECT r.object_id, r.shard AS r_shard,
       r.r_label::text AS r_label,
       r.r_allowed_origins::text AS r_allowed_origins,
       'digest:' || left(encode(sha256(convert_to('outboxctl:' || r.r_key::text, 'UTF8')), 'hex'), 16) AS r_key
  FROM (SELECT r.apikey_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.label AS r_label,
                       r.allowed_origins AS r_allowed_origins,
                       r.key AS r_key
                  FROM us.hybridcloud_apikeyreplica r
                 WHERE r.apikey_id IS NOT NULL) r
 ORDER BY r.object_id, r.replica_row DESC;

-- outboxctl: replica-cells-by-organization
-- The cell of each object's organization (find_cells_for_orgs).
SELECT s.id::bigint AS object_id, om.region_name::text AS cell_name
  FROM "ctl".sentry_apikey s
  JOIN "ctl".sentry_organizationmapping om ON om.organization_id = s.organization_id
 WHERE s.id = ANY (ARRAY[7, 8]::bigint[])
 ORDER BY 1, 2;

-- outboxctl: replica-cells-by-column
-- The cell each object names.
SELECT s.id::bigint AS object_id, s.region_name::text AS cell_name
  FROM "ctl".sentry_organizationslugreservation s
 WHERE s.id = ANY (ARRAY[7]::bigint[])
 ORDER BY 1, 2;

-- outboxctl: replica-cells-all
-- Every cell the organization mappings name, and this one (find_all_cell_names).
SELECT DISTINCT c.cell_name
  FROM (SELECT 'x''; DROP TABLE y; --'::text AS cell_name  -- the cell's name (region_name)
        UNION ALL
        SELECT om.region_name::text FROM "ctl".sentry_organizationmapping om) c
 ORDER BY 1;

-- outboxctl: replica-cells-by-provider-organization
-- The cell of each identity's provider's organization (find_cells_for_orgs).
SELECT s.id::bigint AS object_id, om.region_name::text AS cell_name
  FROM "ctl".sentry_authidentity s
  JOIN "ctl".sentry_authprovider ap ON ap.id = s.auth_provider_id
  JOIN "ctl".sentry_organizationmapping om ON om.organization_id = ap.organization_id
 WHERE s.id = ANY (ARRAY[7]::bigint[])
 ORDER BY 1, 2;
