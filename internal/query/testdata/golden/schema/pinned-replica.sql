-- outboxctl: replica-source-count-organization
-- Source rows of sentry.sentry_organization.
SELECT count(*) AS sources
  FROM sentry.sentry_organization o;

-- outboxctl: verify-organization
-- Drift of sentry.sentry_organization -> sentry.sentry_organizationmapping: missing (no replica), orphan (no source), stale (fields differ),
-- with the object's queued outbox rows (pending: not drift yet) beside each; objects in sync are not listed.
SELECT d.object_id, d.has_source, d.has_replica,
       d.s_slug, d.r_slug,
       d.s_name, d.r_name,
       d.s_status, d.r_status,
       d.s_region_name, d.r_region_name,
       d.s_allow_joinleave, d.r_allow_joinleave,
       d.s_enhanced_privacy, d.r_enhanced_privacy,
       d.s_require_2fa, d.r_require_2fa,
       d.s_early_adopter, d.r_early_adopter,
       d.s_disable_shared_issues, d.r_disable_shared_issues,
       d.s_disable_new_visibility_features, d.r_disable_new_visibility_features,
       d.s_require_email_verification, d.r_require_email_verification,
       d.s_codecov_access, d.r_codecov_access,
       d.s_disable_member_project_creation, d.r_disable_member_project_creation,
       d.s_prevent_superuser_access, d.r_prevent_superuser_access,
       d.s_disable_member_invite, d.r_disable_member_invite,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (SELECT s.id AS object_id, true AS has_source, r.organization_id IS NOT NULL AS has_replica,
               (s.slug)::text AS s_slug, r.slug::text AS r_slug,
               (s.name)::text AS s_name, r.name::text AS r_name,
               (s.status)::text AS s_status, r.status::text AS r_status,
               ('us'::text)::text AS s_region_name, r.region_name::text AS r_region_name,  -- the cell's name (region_name)
               ((s.flags & 1) <> 0)::text AS s_allow_joinleave, r.allow_joinleave::text AS r_allow_joinleave,
               ((s.flags & 2) <> 0)::text AS s_enhanced_privacy, r.enhanced_privacy::text AS r_enhanced_privacy,
               ((s.flags & 16) <> 0)::text AS s_require_2fa, r.require_2fa::text AS r_require_2fa,
               ((s.flags & 8) <> 0)::text AS s_early_adopter, r.early_adopter::text AS r_early_adopter,
               ((s.flags & 4) <> 0)::text AS s_disable_shared_issues, r.disable_shared_issues::text AS r_disable_shared_issues,
               ((s.flags & 32) <> 0)::text AS s_disable_new_visibility_features, r.disable_new_visibility_features::text AS r_disable_new_visibility_features,
               ((s.flags & 64) <> 0)::text AS s_require_email_verification, r.require_email_verification::text AS r_require_email_verification,
               ((s.flags & 128) <> 0)::text AS s_codecov_access, r.codecov_access::text AS r_codecov_access,
               ((s.flags & 256) <> 0)::text AS s_disable_member_project_creation, r.disable_member_project_creation::text AS r_disable_member_project_creation,
               ((s.flags & 512) <> 0)::text AS s_prevent_superuser_access, r.prevent_superuser_access::text AS r_prevent_superuser_access,
               ((s.flags & 1024) <> 0)::text AS s_disable_member_invite, r.disable_member_invite::text AS r_disable_member_invite
          FROM sentry.sentry_organization s
          LEFT JOIN sentry.sentry_organizationmapping r ON r.organization_id = s.id
         WHERE (r.organization_id IS NULL
                OR (s.slug, s.name, s.status, 'us'::text, (s.flags & 1) <> 0, (s.flags & 2) <> 0, (s.flags & 16) <> 0, (s.flags & 8) <> 0, (s.flags & 4) <> 0, (s.flags & 32) <> 0, (s.flags & 64) <> 0, (s.flags & 128) <> 0, (s.flags & 256) <> 0, (s.flags & 512) <> 0, (s.flags & 1024) <> 0)  -- the cell's name (region_name)
                   IS DISTINCT FROM (r.slug, r.name, r.status, r.region_name, r.allow_joinleave, r.enhanced_privacy, r.require_2fa, r.early_adopter, r.disable_shared_issues, r.disable_new_visibility_features, r.require_email_verification, r.codecov_access, r.disable_member_project_creation, r.prevent_superuser_access, r.disable_member_invite))
        UNION ALL
        SELECT r.organization_id, false, true, -- orphans: a replica without its source
               NULL::text AS s_slug, r.slug::text AS r_slug,
               NULL::text AS s_name, r.name::text AS r_name,
               NULL::text AS s_status, r.status::text AS r_status,
               NULL::text AS s_region_name, r.region_name::text AS r_region_name,
               NULL::text AS s_allow_joinleave, r.allow_joinleave::text AS r_allow_joinleave,
               NULL::text AS s_enhanced_privacy, r.enhanced_privacy::text AS r_enhanced_privacy,
               NULL::text AS s_require_2fa, r.require_2fa::text AS r_require_2fa,
               NULL::text AS s_early_adopter, r.early_adopter::text AS r_early_adopter,
               NULL::text AS s_disable_shared_issues, r.disable_shared_issues::text AS r_disable_shared_issues,
               NULL::text AS s_disable_new_visibility_features, r.disable_new_visibility_features::text AS r_disable_new_visibility_features,
               NULL::text AS s_require_email_verification, r.require_email_verification::text AS r_require_email_verification,
               NULL::text AS s_codecov_access, r.codecov_access::text AS r_codecov_access,
               NULL::text AS s_disable_member_project_creation, r.disable_member_project_creation::text AS r_disable_member_project_creation,
               NULL::text AS s_prevent_superuser_access, r.prevent_superuser_access::text AS r_prevent_superuser_access,
               NULL::text AS s_disable_member_invite, r.disable_member_invite::text AS r_disable_member_invite
          FROM sentry.sentry_organizationmapping r
         WHERE NOT EXISTS (SELECT 1 FROM sentry.sentry_organization s WHERE s.id = r.organization_id)
       ) d
  LEFT JOIN (SELECT x.object_identifier, min(x.shard_identifier) AS shard_identifier, count(*) AS pending_rows,
               min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
          FROM sentry.sentry_regionoutbox x
         WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
           AND x.category = 2  -- ORGANIZATION_UPDATE
         GROUP BY x.object_identifier) p ON p.object_identifier = d.object_id
 ORDER BY 1;

-- outboxctl: replica-source-organization
-- Source rows of sentry.sentry_organization and the objects with queued outbox rows, in object order.
SELECT coalesce(s.object_id, p.object_identifier) AS object_id,
       s.object_id IS NOT NULL AS has_source,
       s.slug AS s_slug,
       s.name AS s_name,
       s.status AS s_status,
       s.region_name AS s_region_name,
       s.allow_joinleave AS s_allow_joinleave,
       s.enhanced_privacy AS s_enhanced_privacy,
       s.require_2fa AS s_require_2fa,
       s.early_adopter AS s_early_adopter,
       s.disable_shared_issues AS s_disable_shared_issues,
       s.disable_new_visibility_features AS s_disable_new_visibility_features,
       s.require_email_verification AS s_require_email_verification,
       s.codecov_access AS s_codecov_access,
       s.disable_member_project_creation AS s_disable_member_project_creation,
       s.prevent_superuser_access AS s_prevent_superuser_access,
       s.disable_member_invite AS s_disable_member_invite,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (SELECT o.id AS object_id,
               o.slug::text AS slug,
               o.name::text AS name,
               o.status::text AS status,
               'us'::text AS region_name,  -- the cell's name (region_name)
               ((o.flags & 1) <> 0)::text AS allow_joinleave,
               ((o.flags & 2) <> 0)::text AS enhanced_privacy,
               ((o.flags & 16) <> 0)::text AS require_2fa,
               ((o.flags & 8) <> 0)::text AS early_adopter,
               ((o.flags & 4) <> 0)::text AS disable_shared_issues,
               ((o.flags & 32) <> 0)::text AS disable_new_visibility_features,
               ((o.flags & 64) <> 0)::text AS require_email_verification,
               ((o.flags & 128) <> 0)::text AS codecov_access,
               ((o.flags & 256) <> 0)::text AS disable_member_project_creation,
               ((o.flags & 512) <> 0)::text AS prevent_superuser_access,
               ((o.flags & 1024) <> 0)::text AS disable_member_invite
          FROM sentry.sentry_organization o
       ) s
  FULL JOIN (SELECT x.object_identifier, min(x.shard_identifier) AS shard_identifier, count(*) AS pending_rows,
               min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
          FROM sentry.sentry_regionoutbox x
         WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
           AND x.category = 2  -- ORGANIZATION_UPDATE
         GROUP BY x.object_identifier) p ON p.object_identifier = s.object_id
 ORDER BY 1;

-- outboxctl: replica-rows-organization
-- Replica rows of sentry.sentry_organizationmapping of cell us, in object order.
SELECT m.organization_id AS object_id,
       m.slug::text AS r_slug,
       m.name::text AS r_name,
       m.status::text AS r_status,
       m.region_name::text AS r_region_name,
       m.allow_joinleave::text AS r_allow_joinleave,
       m.enhanced_privacy::text AS r_enhanced_privacy,
       m.require_2fa::text AS r_require_2fa,
       m.early_adopter::text AS r_early_adopter,
       m.disable_shared_issues::text AS r_disable_shared_issues,
       m.disable_new_visibility_features::text AS r_disable_new_visibility_features,
       m.require_email_verification::text AS r_require_email_verification,
       m.codecov_access::text AS r_codecov_access,
       m.disable_member_project_creation::text AS r_disable_member_project_creation,
       m.prevent_superuser_access::text AS r_prevent_superuser_access,
       m.disable_member_invite::text AS r_disable_member_invite
  FROM sentry.sentry_organizationmapping m
 WHERE m.region_name = 'us'  -- the cell's name (region_name)
 ORDER BY m.organization_id;

-- outboxctl: replica-source-count-organizationmember
-- Source rows of sentry.sentry_organizationmember.
SELECT count(*) AS sources
  FROM sentry.sentry_organizationmember m
 WHERE m.id = ANY (ARRAY[7, 8]::bigint[]);

-- outboxctl: verify-organizationmember
-- Drift of sentry.sentry_organizationmember -> sentry.sentry_organizationmembermapping: missing (no replica), orphan (no source), stale (fields differ),
-- with the object's queued outbox rows (pending: not drift yet) beside each; objects in sync are not listed.
SELECT d.object_id, d.has_source, d.has_replica,
       d.s_organization_id, d.r_organization_id,
       d.s_role, d.r_role,
       d.s_user_id, d.r_user_id,
       d.s_email, d.r_email,
       d.s_inviter_id, d.r_inviter_id,
       d.s_invite_status, d.r_invite_status,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (SELECT s.id AS object_id, true AS has_source, r.organizationmember_id IS NOT NULL AS has_replica,
               (s.organization_id)::text AS s_organization_id, r.organization_id::text AS r_organization_id,
               (s.role)::text AS s_role, r.role::text AS r_role,
               (s.user_id)::text AS s_user_id, r.user_id::text AS r_user_id,
               (s.email)::text AS s_email, r.email::text AS r_email,
               (s.inviter_id)::text AS s_inviter_id, r.inviter_id::text AS r_inviter_id,
               (s.invite_status)::text AS s_invite_status, r.invite_status::text AS r_invite_status
          FROM sentry.sentry_organizationmember s
          LEFT JOIN sentry.sentry_organizationmembermapping r ON r.organizationmember_id = s.id
         WHERE (r.organizationmember_id IS NULL
                OR (s.organization_id, s.role, s.user_id, s.email, s.inviter_id, s.invite_status)
                   IS DISTINCT FROM (r.organization_id, r.role, r.user_id, r.email, r.inviter_id, r.invite_status))
           AND s.id = ANY (ARRAY[7, 8]::bigint[])
        UNION ALL
        SELECT r.organizationmember_id, false, true, -- orphans: a replica without its source
               NULL::text AS s_organization_id, r.organization_id::text AS r_organization_id,
               NULL::text AS s_role, r.role::text AS r_role,
               NULL::text AS s_user_id, r.user_id::text AS r_user_id,
               NULL::text AS s_email, r.email::text AS r_email,
               NULL::text AS s_inviter_id, r.inviter_id::text AS r_inviter_id,
               NULL::text AS s_invite_status, r.invite_status::text AS r_invite_status
          FROM sentry.sentry_organizationmembermapping r
         WHERE NOT EXISTS (SELECT 1 FROM sentry.sentry_organizationmember s WHERE s.id = r.organizationmember_id)
           AND r.organizationmember_id IS NOT NULL
           AND r.organizationmember_id = ANY (ARRAY[7, 8]::bigint[])
       ) d
  LEFT JOIN (SELECT x.object_identifier, min(x.shard_identifier) AS shard_identifier, count(*) AS pending_rows,
               min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
          FROM sentry.sentry_regionoutbox x
         WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
           AND x.category = 3  -- ORGANIZATION_MEMBER_UPDATE
           AND x.object_identifier = ANY (ARRAY[7, 8]::bigint[])
         GROUP BY x.object_identifier) p ON p.object_identifier = d.object_id
 ORDER BY 1;

-- outboxctl: replica-source-organizationmember
-- Source rows of sentry.sentry_organizationmember and the objects with queued outbox rows, in object order.
SELECT coalesce(s.object_id, p.object_identifier) AS object_id,
       s.object_id IS NOT NULL AS has_source,
       s.organization_id AS s_organization_id,
       s.role AS s_role,
       s.user_id AS s_user_id,
       s.email AS s_email,
       s.inviter_id AS s_inviter_id,
       s.invite_status AS s_invite_status,
       p.shard_identifier AS pending_shard, p.pending_rows, p.pending_next, p.pending_due
  FROM (SELECT m.id AS object_id,
               m.organization_id::text AS organization_id,
               m.role::text AS role,
               m.user_id::text AS user_id,
               m.email::text AS email,
               m.inviter_id::text AS inviter_id,
               m.invite_status::text AS invite_status
          FROM sentry.sentry_organizationmember m
         WHERE m.id = ANY (ARRAY[7, 8]::bigint[])
       ) s
  FULL JOIN (SELECT x.object_identifier, min(x.shard_identifier) AS shard_identifier, count(*) AS pending_rows,
               min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
          FROM sentry.sentry_regionoutbox x
         WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
           AND x.category = 3  -- ORGANIZATION_MEMBER_UPDATE
           AND x.object_identifier = ANY (ARRAY[7, 8]::bigint[])
         GROUP BY x.object_identifier) p ON p.object_identifier = s.object_id
 ORDER BY 1;

-- outboxctl: replica-rows-organizationmember
-- Replica rows of sentry.sentry_organizationmembermapping of cell us, in object order.
SELECT mm.organizationmember_id AS object_id,
       mm.organization_id::text AS r_organization_id,
       mm.role::text AS r_role,
       mm.user_id::text AS r_user_id,
       mm.email::text AS r_email,
       mm.inviter_id::text AS r_inviter_id,
       mm.invite_status::text AS r_invite_status
  FROM sentry.sentry_organizationmembermapping mm
 WHERE mm.organizationmember_id IS NOT NULL
   AND EXISTS (SELECT 1
                 FROM sentry.sentry_organizationmapping om
                WHERE om.organization_id = mm.organization_id
                  AND om.region_name = 'us')  -- the cell's name (region_name)
   AND mm.organizationmember_id = ANY (ARRAY[7, 8]::bigint[])
 ORDER BY mm.organizationmember_id;

-- outboxctl: replicate-source-organization
-- The objects named that exist in sentry.sentry_organization, with their shard.
SELECT o.id AS object_id, o.id AS shard_identifier, NULL::bigint AS user_id
  FROM sentry.sentry_organization o
 WHERE o.id = ANY (ARRAY[1]::bigint[])
 ORDER BY o.id;

-- outboxctl: replicate-replica-organizationmember
-- The replicas of objects gone from the source, with the shard their deletion outbox names.
SELECT mm.organizationmember_id AS object_id, mm.organization_id AS shard_identifier, mm.user_id
  FROM sentry.sentry_organizationmembermapping mm
 WHERE mm.organizationmember_id = ANY (ARRAY[7]::bigint[])
 ORDER BY mm.organizationmember_id, mm.id DESC;

-- outboxctl: replicate-outbox
-- The outbox rows Sentry's outbox_for_update() writes for 2 object(s), in sentry.sentry_regionoutbox: a fresh row's schedule.
/* outboxctl replicate: INC-7 */ INSERT INTO sentry.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT 0::integer, x.shard, 3::integer, x.object, CAST(NULLIF(x.payload, '') AS jsonb), now(), '2016-08-01 00:00:00+00'::timestamptz, now()  -- ORGANIZATION_SCOPE, ORGANIZATION_MEMBER_UPDATE, Sentry's THE_PAST
  FROM unnest(ARRAY[1, 2]::bigint[], ARRAY[7, 8]::bigint[], ARRAY['{"user_id":70}', '']::text[]) AS x(shard, object, payload)
RETURNING id, shard_identifier, object_identifier;

-- outboxctl: replicate-outbox
-- The outbox rows Sentry's outbox_for_update() writes for 2 object(s), in sentry.sentry_regionoutbox: a fresh row's schedule.
INSERT INTO sentry.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT 0::integer, x.shard, 3::integer, x.object, CAST(NULLIF(x.payload, '') AS text), now(), '2016-08-01 00:00:00+00'::timestamptz, now()  -- ORGANIZATION_SCOPE, ORGANIZATION_MEMBER_UPDATE, Sentry's THE_PAST
  FROM unnest(ARRAY[1, 2]::bigint[], ARRAY[7, 8]::bigint[], ARRAY['{"user_id":70}', '']::text[]) AS x(shard, object, payload)
RETURNING id, shard_identifier, object_identifier;

-- outboxctl: replica-sample
-- The newest organizations, how many have no organization mapping (a sample: verify checks all).
SELECT count(*) AS sampled,
       count(*) FILTER (WHERE m.organization_id IS NULL) AS missing
  FROM ((SELECT o.id FROM sentry.sentry_organization o ORDER BY o.id LIMIT 100)
        UNION
        (SELECT o.id FROM sentry.sentry_organization o ORDER BY o.id DESC LIMIT 100)) s
  LEFT JOIN sentry.sentry_organizationmapping m ON m.organization_id = s.id;
