-- outboxctl: replica-columns
-- The columns of the pair's tables (a field whose column is missing is not compared).
SELECT t.name AS table_name, a.attname::text AS column_name
  FROM unnest(ARRAY['sentry_organization', 'sentry_organizationmapping']::text[]) AS t(name)
  JOIN pg_attribute a ON a.attrelid = to_regclass(t.name)
                     AND a.attnum > 0
                     AND NOT a.attisdropped
 ORDER BY 1, 2;

-- outboxctl: replica-unkeyed
-- The rows of sentry_organizationmembermapping whose organizationmember_id is NULL: Sentry's receiver never finds them (not compared).
SELECT count(*) AS unkeyed
  FROM sentry_organizationmembermapping r
 WHERE r.organizationmember_id IS NULL;

-- outboxctl: verify-pair
-- Drift of sentry_organization -> sentry_organizationmapping: the count of each class (missing: no replica, orphan: no source, stale: fields differ,
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
               OR (s.s_slug, s.s_region_name, s.s_require_2fa)
                  IS DISTINCT FROM (r.r_slug, r.r_region_name, r.r_require_2fa) AS drifted
          FROM (SELECT s.id::bigint AS object_id, (s.id)::bigint AS shard,
                       s.slug AS s_slug,
                       'us'::text AS s_region_name,  -- the cell's name (region_name)
                       (s.flags & 16) <> 0 AS s_require_2fa
                  FROM sentry_organization s) s
          FULL JOIN (SELECT r.*
                       FROM (SELECT r.organization_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.slug AS r_slug,
                       r.region_name AS r_region_name,
                       r.require_2fa AS r_require_2fa
                  FROM sentry_organizationmapping r
                 WHERE r.organization_id IS NOT NULL) r
                     ) r
            ON r.object_id = s.object_id
        OFFSET 0) d -- computes drifted once a row (flattened, the aggregate would repeat it in every FILTER)
  LEFT JOIN (SELECT DISTINCT x.shard_identifier, x.object_identifier
               FROM sentry_regionoutbox x
              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                AND x.category = 2  -- ORGANIZATION_UPDATE
                ) p
         ON p.object_identifier = d.object_id AND p.shard_identifier = d.shard AND d.drifted
)
SELECT c.in_sync, c.missing, c.stale, c.orphan, c.pending, l.*
  FROM c
  LEFT JOIN LATERAL (
        SELECT k.object_id, s.object_id IS NOT NULL AS has_source, r.object_id IS NOT NULL AS has_replica,
               s.s_slug::text AS s_slug,
               r.r_slug::text AS r_slug,
               s.s_region_name::text AS s_region_name,
               r.r_region_name::text AS r_region_name,
               s.s_require_2fa::text AS s_require_2fa,
               r.r_require_2fa::text AS r_require_2fa,
               p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
          FROM unnest(c.listed) AS k(object_id)
          LEFT JOIN (SELECT s.id::bigint AS object_id, (s.id)::bigint AS shard,
                       s.slug AS s_slug,
                       'us'::text AS s_region_name,  -- the cell's name (region_name)
                       (s.flags & 16) <> 0 AS s_require_2fa
                  FROM sentry_organization s) s ON s.object_id = k.object_id
          LEFT JOIN (SELECT r.*
                       FROM (SELECT r.organization_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.slug AS r_slug,
                       r.region_name AS r_region_name,
                       r.require_2fa AS r_require_2fa
                  FROM sentry_organizationmapping r
                 WHERE r.organization_id IS NOT NULL) r
                     ) r ON r.object_id = k.object_id
          LEFT JOIN LATERAL (SELECT x.shard_identifier, count(*) AS pending_rows, min(x.scheduled_for) AS pending_next,
                                    min(x.scheduled_for) <= now() AS pending_due
                               FROM sentry_regionoutbox x
                              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                                AND x.category = 2  -- ORGANIZATION_UPDATE
                                AND x.shard_identifier = coalesce(s.shard, r.shard)
                                AND x.object_identifier = k.object_id
                              GROUP BY x.shard_identifier) p ON true
       ) l ON true
 ORDER BY l.object_id;

-- outboxctl: replica-source
-- Source rows of sentry_organization and the objects with queued outbox rows, in object order.
SELECT coalesce(s.object_id, p.object_identifier) AS object_id,
       s.object_id IS NOT NULL AS has_source,
       s.s_slug::text AS s_slug,
       s.s_region_name::text AS s_region_name,
       s.s_require_2fa::text AS s_require_2fa,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (SELECT s.id::bigint AS object_id, (s.id)::bigint AS shard,
                       s.slug AS s_slug,
                       'us'::text AS s_region_name,  -- the cell's name (region_name)
                       (s.flags & 16) <> 0 AS s_require_2fa
                  FROM sentry_organization s) s
  FULL JOIN (SELECT x.shard_identifier, x.object_identifier, count(*) AS pending_rows,
                    min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
               FROM sentry_regionoutbox x
              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                AND x.category = 2  -- ORGANIZATION_UPDATE
              GROUP BY x.shard_identifier, x.object_identifier) p
         ON p.object_identifier = s.object_id AND p.shard_identifier = s.shard
 ORDER BY 1, 2 DESC, pending_shard;

-- outboxctl: replica-rows
-- Replica rows of sentry_organizationmapping of cell us, in object order.
SELECT r.object_id, r.shard AS r_shard,
       r.r_slug::text AS r_slug,
       r.r_region_name::text AS r_region_name,
       r.r_require_2fa::text AS r_require_2fa
  FROM (SELECT r.organization_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.slug AS r_slug,
                       r.region_name AS r_region_name,
                       r.require_2fa AS r_require_2fa
                  FROM sentry_organizationmapping r
                 WHERE r.organization_id IS NOT NULL
                   AND r.region_name = 'us') r  -- the cell's name (region_name)
 ORDER BY r.object_id, r.replica_row DESC;

-- outboxctl: verify-pair
-- Drift of sentry_organizationmember -> sentry_organizationmembermapping: the count of each class (missing: no replica, orphan: no source, stale: fields differ,
-- pending: one of these with the object's outbox rows queued in its shard), then the first drifted objects with their values.
WITH c AS (
SELECT count(*) FILTER (WHERE d.has_source AND NOT d.drifted) AS in_sync,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NULL AND NOT d.has_replica) AS missing,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NULL AND d.has_source AND d.has_replica) AS stale,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NULL AND NOT d.has_source) AS orphan,
       count(*) FILTER (WHERE d.drifted AND p.object_identifier IS NOT NULL) AS pending,
       (array_agg(d.object_id ORDER BY d.object_id) FILTER (WHERE d.drifted))[:2147483647] AS listed  -- drifted objects listed with their values (--limit)
  FROM (SELECT coalesce(s.object_id, r.object_id) AS object_id,
               s.object_id IS NOT NULL AS has_source,
               r.object_id IS NOT NULL AS has_replica,
               coalesce(s.shard, r.shard) AS shard,
               s.object_id IS NULL OR r.object_id IS NULL
               OR (s.s_role, s.s_user_id)
                  IS DISTINCT FROM (r.r_role, r.r_user_id) AS drifted
          FROM (SELECT s.id::bigint AS object_id, (s.organization_id)::bigint AS shard,
                       s.role AS s_role,
                       s.user_id AS s_user_id
                  FROM sentry_organizationmember s
                 WHERE s.id = ANY (ARRAY[7, 8]::bigint[])) s
          FULL JOIN (SELECT r.*
                       FROM (SELECT r.organizationmember_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.role AS r_role,
                       r.user_id AS r_user_id
                  FROM sentry_organizationmembermapping r
                 WHERE r.organizationmember_id IS NOT NULL
                   AND r.organizationmember_id = ANY (ARRAY[7, 8]::bigint[])) r
                     ) r
            ON r.object_id = s.object_id
        OFFSET 0) d -- computes drifted once a row (flattened, the aggregate would repeat it in every FILTER)
  LEFT JOIN (SELECT DISTINCT x.shard_identifier, x.object_identifier
               FROM sentry_regionoutbox x
              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                AND x.category = 3  -- ORGANIZATION_MEMBER_UPDATE
                AND x.object_identifier = ANY (ARRAY[7, 8]::bigint[])) p
         ON p.object_identifier = d.object_id AND p.shard_identifier = d.shard AND d.drifted
)
SELECT c.in_sync, c.missing, c.stale, c.orphan, c.pending, l.*
  FROM c
  LEFT JOIN LATERAL (
        SELECT k.object_id, s.object_id IS NOT NULL AS has_source, r.object_id IS NOT NULL AS has_replica,
               s.s_role::text AS s_role,
               r.r_role::text AS r_role,
               s.s_user_id::text AS s_user_id,
               r.r_user_id::text AS r_user_id,
               p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
          FROM unnest(c.listed) AS k(object_id)
          LEFT JOIN (SELECT s.id::bigint AS object_id, (s.organization_id)::bigint AS shard,
                       s.role AS s_role,
                       s.user_id AS s_user_id
                  FROM sentry_organizationmember s
                 WHERE s.id = ANY (ARRAY[7, 8]::bigint[])) s ON s.object_id = k.object_id
          LEFT JOIN (SELECT r.*
                       FROM (SELECT r.organizationmember_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.role AS r_role,
                       r.user_id AS r_user_id
                  FROM sentry_organizationmembermapping r
                 WHERE r.organizationmember_id IS NOT NULL
                   AND r.organizationmember_id = ANY (ARRAY[7, 8]::bigint[])) r
                     ) r ON r.object_id = k.object_id
          LEFT JOIN LATERAL (SELECT x.shard_identifier, count(*) AS pending_rows, min(x.scheduled_for) AS pending_next,
                                    min(x.scheduled_for) <= now() AS pending_due
                               FROM sentry_regionoutbox x
                              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                                AND x.category = 3  -- ORGANIZATION_MEMBER_UPDATE
                                AND x.shard_identifier = coalesce(s.shard, r.shard)
                                AND x.object_identifier = k.object_id
                              GROUP BY x.shard_identifier) p ON true
       ) l ON true
 ORDER BY l.object_id;

-- outboxctl: replica-source
-- Source rows of sentry_organizationmember and the objects with queued outbox rows, in object order.
SELECT coalesce(s.object_id, p.object_identifier) AS object_id,
       s.object_id IS NOT NULL AS has_source,
       s.s_role::text AS s_role,
       s.s_user_id::text AS s_user_id,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (SELECT s.id::bigint AS object_id, (s.organization_id)::bigint AS shard,
                       s.role AS s_role,
                       s.user_id AS s_user_id
                  FROM sentry_organizationmember s
                 WHERE s.id = ANY (ARRAY[7, 8]::bigint[])) s
  FULL JOIN (SELECT x.shard_identifier, x.object_identifier, count(*) AS pending_rows,
                    min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
               FROM sentry_regionoutbox x
              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                AND x.category = 3  -- ORGANIZATION_MEMBER_UPDATE
                AND x.object_identifier = ANY (ARRAY[7, 8]::bigint[])
              GROUP BY x.shard_identifier, x.object_identifier) p
         ON p.object_identifier = s.object_id AND p.shard_identifier = s.shard
 ORDER BY 1, 2 DESC, pending_shard;

-- outboxctl: replica-rows
-- Replica rows of sentry_organizationmembermapping of cell us, in object order.
SELECT r.object_id, r.shard AS r_shard,
       r.r_role::text AS r_role,
       r.r_user_id::text AS r_user_id
  FROM (SELECT r.organizationmember_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.role AS r_role,
                       r.user_id AS r_user_id
                  FROM sentry_organizationmembermapping r
                 WHERE r.organizationmember_id IS NOT NULL
                   AND r.organizationmember_id = ANY (ARRAY[7, 8]::bigint[])
                   AND EXISTS (SELECT 1 FROM sentry_organizationmapping om WHERE om.organization_id = r.organization_id AND om.region_name = 'us')) r  -- the cell's name (region_name)
 ORDER BY r.object_id, r.replica_row DESC;

-- outboxctl: verify-pair
-- Drift of sentry_organizationmember_teams -> sentry_organizationmember_teamsreplica: the count of each class (missing: no replica, orphan: no source, stale: fields differ,
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
               OR (s.s_organization_id, s.s_is_active)
                  IS DISTINCT FROM (r.r_organization_id, r.r_is_active) AS drifted
          FROM (SELECT s.id::bigint AS object_id, (m.organization_id)::bigint AS shard,
                       m.organization_id AS s_organization_id,
                       s.is_active AS s_is_active
                  FROM sentry_organizationmember_teams s
                  LEFT JOIN sentry_organizationmember m ON m.id = s.organizationmember_id) s
          FULL JOIN (SELECT r.*
                       FROM (SELECT r.organizationmemberteam_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.organization_id AS r_organization_id,
                       r.is_active AS r_is_active
                  FROM sentry_organizationmember_teamsreplica r
                 WHERE r.organizationmemberteam_id IS NOT NULL) r
                     ) r
            ON r.object_id = s.object_id
        OFFSET 0) d -- computes drifted once a row (flattened, the aggregate would repeat it in every FILTER)
  LEFT JOIN (SELECT DISTINCT x.shard_identifier, x.object_identifier
               FROM sentry_regionoutbox x
              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                AND x.category = 26  -- ORGANIZATION_MEMBER_TEAM_UPDATE
                ) p
         ON p.object_identifier = d.object_id AND p.shard_identifier = d.shard AND d.drifted
)
SELECT c.in_sync, c.missing, c.stale, c.orphan, c.pending, l.*
  FROM c
  LEFT JOIN LATERAL (
        SELECT k.object_id, s.object_id IS NOT NULL AS has_source, r.object_id IS NOT NULL AS has_replica,
               s.s_organization_id::text AS s_organization_id,
               r.r_organization_id::text AS r_organization_id,
               s.s_is_active::text AS s_is_active,
               r.r_is_active::text AS r_is_active,
               p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
          FROM unnest(c.listed) AS k(object_id)
          LEFT JOIN (SELECT s.id::bigint AS object_id, (m.organization_id)::bigint AS shard,
                       m.organization_id AS s_organization_id,
                       s.is_active AS s_is_active
                  FROM sentry_organizationmember_teams s
                  LEFT JOIN sentry_organizationmember m ON m.id = s.organizationmember_id) s ON s.object_id = k.object_id
          LEFT JOIN (SELECT r.*
                       FROM (SELECT r.organizationmemberteam_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.organization_id AS r_organization_id,
                       r.is_active AS r_is_active
                  FROM sentry_organizationmember_teamsreplica r
                 WHERE r.organizationmemberteam_id IS NOT NULL) r
                     ) r ON r.object_id = k.object_id
          LEFT JOIN LATERAL (SELECT x.shard_identifier, count(*) AS pending_rows, min(x.scheduled_for) AS pending_next,
                                    min(x.scheduled_for) <= now() AS pending_due
                               FROM sentry_regionoutbox x
                              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                                AND x.category = 26  -- ORGANIZATION_MEMBER_TEAM_UPDATE
                                AND x.shard_identifier = coalesce(s.shard, r.shard)
                                AND x.object_identifier = k.object_id
                              GROUP BY x.shard_identifier) p ON true
       ) l ON true
 ORDER BY l.object_id;

-- outboxctl: replica-source
-- Source rows of sentry_organizationmember_teams and the objects with queued outbox rows, in object order.
SELECT coalesce(s.object_id, p.object_identifier) AS object_id,
       s.object_id IS NOT NULL AS has_source,
       s.s_organization_id::text AS s_organization_id,
       s.s_is_active::text AS s_is_active,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (SELECT s.id::bigint AS object_id, (m.organization_id)::bigint AS shard,
                       m.organization_id AS s_organization_id,
                       s.is_active AS s_is_active
                  FROM sentry_organizationmember_teams s
                  LEFT JOIN sentry_organizationmember m ON m.id = s.organizationmember_id) s
  FULL JOIN (SELECT x.shard_identifier, x.object_identifier, count(*) AS pending_rows,
                    min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
               FROM sentry_regionoutbox x
              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                AND x.category = 26  -- ORGANIZATION_MEMBER_TEAM_UPDATE
              GROUP BY x.shard_identifier, x.object_identifier) p
         ON p.object_identifier = s.object_id AND p.shard_identifier = s.shard
 ORDER BY 1, 2 DESC, pending_shard;

-- outboxctl: replica-rows
-- Replica rows of sentry_organizationmember_teamsreplica of cell us, in object order.
SELECT r.object_id, r.shard AS r_shard,
       r.r_organization_id::text AS r_organization_id,
       r.r_is_active::text AS r_is_active
  FROM (SELECT r.organizationmemberteam_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.organization_id AS r_organization_id,
                       r.is_active AS r_is_active
                  FROM sentry_organizationmember_teamsreplica r
                 WHERE r.organizationmemberteam_id IS NOT NULL
                   AND r.organizationmemberteam_id = ANY (ARRAY[7, 8]::bigint[])
                   AND EXISTS (SELECT 1 FROM sentry_organizationmapping om WHERE om.organization_id = r.organization_id AND om.region_name = 'us')) r  -- the cell's name (region_name)
 ORDER BY r.object_id, r.replica_row DESC;

-- outboxctl: replica-source
-- Source rows of sentry_apikey and the objects with queued outbox rows, in object order.
SELECT coalesce(s.object_id, p.object_identifier) AS object_id,
       s.object_id IS NOT NULL AS has_source,
       s.s_label::text AS s_label,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (SELECT s.id::bigint AS object_id, (s.organization_id)::bigint AS shard,
                       s.label AS s_label
                  FROM sentry_apikey s
                 WHERE EXISTS (SELECT 1 FROM sentry_organizationmapping om WHERE om.organization_id = s.organization_id AND om.region_name = 'us')) s  -- the cell's name (region_name)
  FULL JOIN (SELECT x.shard_identifier, x.object_identifier, count(*) AS pending_rows,
                    min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
               FROM sentry_controloutbox x
              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                AND x.category = 28  -- API_KEY_UPDATE
                AND x.region_name = 'us'  -- the cell's name (region_name)
              GROUP BY x.shard_identifier, x.object_identifier) p
         ON p.object_identifier = s.object_id AND p.shard_identifier = s.shard
 ORDER BY 1, 2 DESC, pending_shard;

-- outboxctl: replica-rows
-- Replica rows of hybridcloud_apikeyreplica of cell us, in object order.
SELECT r.object_id, r.shard AS r_shard,
       r.r_label::text AS r_label
  FROM (SELECT r.apikey_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.label AS r_label
                  FROM hybridcloud_apikeyreplica r
                 WHERE r.apikey_id IS NOT NULL) r
 ORDER BY r.object_id, r.replica_row DESC;

-- outboxctl: replica-source
-- Source rows of sentry_apikey and the objects with queued outbox rows, in object order.
SELECT coalesce(s.object_id, p.object_identifier) AS object_id,
       s.object_id IS NOT NULL AS has_source,
       s.s_label::text AS s_label,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (SELECT s.id::bigint AS object_id, (s.organization_id)::bigint AS shard,
                       s.label AS s_label
                  FROM sentry_apikey s
                 WHERE EXISTS (SELECT 1 FROM sentry_organizationmembermapping omm JOIN sentry_organizationmapping om ON om.organization_id = omm.organization_id WHERE omm.user_id = s.user_id AND om.region_name = 'us')) s  -- the cell's name (region_name)
  FULL JOIN (SELECT x.shard_identifier, x.object_identifier, count(*) AS pending_rows,
                    min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
               FROM sentry_controloutbox x
              WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                AND x.category = 28  -- API_KEY_UPDATE
                AND x.region_name = 'us'  -- the cell's name (region_name)
              GROUP BY x.shard_identifier, x.object_identifier) p
         ON p.object_identifier = s.object_id AND p.shard_identifier = s.shard
 ORDER BY 1, 2 DESC, pending_shard;

-- outboxctl: replicate-source
-- The objects named that exist in sentry_organization, with their shard and payload.
SELECT s.object_id, s.shard AS shard_identifier
  FROM (SELECT s.id::bigint AS object_id, (s.id)::bigint AS shard
                  FROM sentry_organization s
                 WHERE s.id = ANY (ARRAY[1]::bigint[])) s
 ORDER BY s.object_id;

-- outboxctl: replicate-replica
-- The replicas of objects gone from sentry_organizationmember, with the shard and payload their deletion outbox names.
SELECT r.object_id, r.shard AS shard_identifier, r.p_user_id::text AS p_user_id
  FROM (SELECT r.organizationmember_id::bigint AS object_id, r.organization_id::bigint AS shard, r.id AS replica_row,
                       r.user_id AS p_user_id
                  FROM sentry_organizationmembermapping r
                 WHERE r.organizationmember_id IS NOT NULL
                   AND r.organizationmember_id = ANY (ARRAY[7]::bigint[])) r
 ORDER BY r.object_id, r.replica_row DESC;

-- outboxctl: replicate-source
-- The objects named that exist in sentry_organizationmember_teams, with their shard and payload.
SELECT s.object_id, s.shard AS shard_identifier
  FROM (SELECT s.id::bigint AS object_id, (m.organization_id)::bigint AS shard
                  FROM sentry_organizationmember_teams s
                  LEFT JOIN sentry_organizationmember m ON m.id = s.organizationmember_id
                 WHERE s.id = ANY (ARRAY[3]::bigint[])) s
 ORDER BY s.object_id;

-- outboxctl: replicate-outbox
-- The outbox rows Sentry's outbox_for_update() writes for 2 object(s), in sentry_regionoutbox: a fresh row's schedule.
/* outboxctl replicate: INC-7 */ INSERT INTO sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT 0::integer, x.shard, 3::integer, x.object, CAST(NULLIF(x.payload, '') AS jsonb), now(), '2016-08-01 00:00:00+00'::timestamptz, now()  -- ORGANIZATION_SCOPE, ORGANIZATION_MEMBER_UPDATE, Sentry's THE_PAST
  FROM unnest(ARRAY[1, 2]::bigint[], ARRAY[7, 8]::bigint[], ARRAY['{"user_id":70}', '']::text[]) AS x(shard, object, payload)
RETURNING id, shard_identifier, object_identifier;

-- outboxctl: replicate-outbox
-- The outbox rows Sentry's outbox_for_update() writes for 2 object(s), in sentry_regionoutbox: a fresh row's schedule.
INSERT INTO sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT 0::integer, x.shard, 3::integer, x.object, CAST(NULLIF(x.payload, '') AS text), now(), '2016-08-01 00:00:00+00'::timestamptz, now()  -- ORGANIZATION_SCOPE, ORGANIZATION_MEMBER_UPDATE, Sentry's THE_PAST
  FROM unnest(ARRAY[1, 2]::bigint[], ARRAY[7, 8]::bigint[], ARRAY['{"user_id":70}', '']::text[]) AS x(shard, object, payload)
RETURNING id, shard_identifier, object_identifier;

-- outboxctl: replicate-outbox-control
-- The outbox rows Sentry's outbox_for_update() writes for 2 object(s), in sentry_controloutbox: a fresh row's schedule.
INSERT INTO sentry_controloutbox (region_name, shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT x.cell, 0::integer, x.shard, 3::integer, x.object, CAST(NULLIF(x.payload, '') AS jsonb), now(), '2016-08-01 00:00:00+00'::timestamptz, now()  -- ORGANIZATION_SCOPE, ORGANIZATION_MEMBER_UPDATE, Sentry's THE_PAST
  FROM unnest(ARRAY['us', 'de']::text[], ARRAY[1, 2]::bigint[], ARRAY[7, 8]::bigint[], ARRAY['{"user_id":70}', '']::text[]) AS x(cell, shard, object, payload)
RETURNING id, shard_identifier, object_identifier;

-- outboxctl: replica-sample
-- The newest organizations, how many have no organization mapping (a sample: verify checks all).
SELECT count(*) AS sampled,
       count(*) FILTER (WHERE m.organization_id IS NULL) AS missing
  FROM ((SELECT o.id FROM sentry_organization o ORDER BY o.id LIMIT 100)
        UNION
        (SELECT o.id FROM sentry_organization o ORDER BY o.id DESC LIMIT 100)) s
  LEFT JOIN sentry_organizationmapping m ON m.organization_id = s.id;
