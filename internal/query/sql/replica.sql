-- verify and replicate: a replication pair's source rows against its replica rows, and the
-- outbox rows replicate writes (docs/replicas.md says which Sentry code each column comes
-- from). Every field is compared as text, cast the same way on both sides, so the set-based
-- comparison of one database (verify-*: typed values compared, the drifted rows' cast to
-- text) and the merge of two streams (replica-source-*, replica-rows-*: text compared in Go)
-- agree. Tables are templates (the target's schema decides them); the cell
-- name, the scope and category of the pair's outbox rows and the ids are bind parameters.

-- name: replica-source-count-organization
-- How many organizations there are: in sync = this less the drifted ones that have a source.
SELECT count(*) AS sources
  FROM /* TEMPLATE: source */sentry_organization o
 /* IF: ids */WHERE o.id = ANY (@ids::bigint[])/* END: ids */;

-- name: verify-organization
-- Organizations against sentry_organizationmapping in one database (a monolith): every
-- organization without a mapping (missing) or whose replicated fields differ (stale), then
-- every mapping without an organization (orphan), with the queued ORGANIZATION_UPDATE
-- outbox rows of the object (pending) beside it. Two joins rather than one FULL JOIN: each
-- runs as a parallel hash join (PostgreSQL 15 has no parallel full join). The mapping's
-- fields are what Sentry's update_organization_mapping_from_instance() copies: slug, name,
-- status, the cell's name and the organization's flag bits (bitfield order of
-- Organization.flags: allow_joinleave = 1, enhanced_privacy = 2, disable_shared_issues = 4,
-- early_adopter = 8, require_2fa = 16, disable_new_visibility_features = 32,
-- require_email_verification = 64, codecov_access = 128, disable_member_project_creation =
-- 256, prevent_superuser_access = 512, disable_member_invite = 1024).
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
               (@cell::text)::text AS s_region_name, r.region_name::text AS r_region_name,
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
          FROM /* TEMPLATE: source */sentry_organization s
          LEFT JOIN /* TEMPLATE: replica */sentry_organizationmapping r ON r.organization_id = s.id
         WHERE (r.organization_id IS NULL
                OR (s.slug, s.name, s.status, @cell::text, (s.flags & 1) <> 0, (s.flags & 2) <> 0, (s.flags & 16) <> 0, (s.flags & 8) <> 0, (s.flags & 4) <> 0, (s.flags & 32) <> 0, (s.flags & 64) <> 0, (s.flags & 128) <> 0, (s.flags & 256) <> 0, (s.flags & 512) <> 0, (s.flags & 1024) <> 0)
                   IS DISTINCT FROM (r.slug, r.name, r.status, r.region_name, r.allow_joinleave, r.enhanced_privacy, r.require_2fa, r.early_adopter, r.disable_shared_issues, r.disable_new_visibility_features, r.require_email_verification, r.codecov_access, r.disable_member_project_creation, r.prevent_superuser_access, r.disable_member_invite))
           /* IF: ids */AND s.id = ANY (@ids::bigint[])/* END: ids */
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
          FROM /* TEMPLATE: replica */sentry_organizationmapping r
         WHERE NOT EXISTS (SELECT 1 FROM /* TEMPLATE: source */sentry_organization s WHERE s.id = r.organization_id)
           /* IF: ids */AND r.organization_id = ANY (@ids::bigint[])/* END: ids */
       ) d
  LEFT JOIN (SELECT x.object_identifier, min(x.shard_identifier) AS shard_identifier, count(*) AS pending_rows,
               min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
          FROM /* TEMPLATE: outbox */sentry_regionoutbox x
         WHERE x.shard_scope = @scope
           AND x.category = @category
           /* IF: ids */AND x.object_identifier = ANY (@ids::bigint[])/* END: ids */
         GROUP BY x.object_identifier) p ON p.object_identifier = d.object_id
 ORDER BY 1;

-- name: replica-source-organization
-- The cell's side of organization -> organizationmapping when the two silos are two
-- databases: every organization with its replicated fields, and every object with queued
-- ORGANIZATION_UPDATE outbox rows (a deletion not yet delivered has no organization), in
-- object order for the merge with replica-rows-organization.
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
               @cell::text AS region_name,
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
          FROM /* TEMPLATE: source */sentry_organization o
         /* IF: ids */WHERE o.id = ANY (@ids::bigint[])/* END: ids */
       ) s
  FULL JOIN (SELECT x.object_identifier, min(x.shard_identifier) AS shard_identifier, count(*) AS pending_rows,
               min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
          FROM /* TEMPLATE: outbox */sentry_regionoutbox x
         WHERE x.shard_scope = @scope
           AND x.category = @category
           /* IF: ids */AND x.object_identifier = ANY (@ids::bigint[])/* END: ids */
         GROUP BY x.object_identifier) p ON p.object_identifier = s.object_id
 ORDER BY 1;

-- name: replica-rows-organization
-- The control side of organization -> organizationmapping: the mappings of one cell
-- (region_name, Sentry's cell_name), in object order (the unique index on organization_id).
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
  FROM /* TEMPLATE: replica */sentry_organizationmapping m
 WHERE m.region_name = @cell
   /* IF: ids */AND m.organization_id = ANY (@ids::bigint[])/* END: ids */
 ORDER BY m.organization_id;

-- name: replica-source-count-organizationmember
-- How many organization members there are.
SELECT count(*) AS sources
  FROM /* TEMPLATE: source */sentry_organizationmember m
 /* IF: ids */WHERE m.id = ANY (@ids::bigint[])/* END: ids */;

-- name: verify-organizationmember
-- Organization members against sentry_organizationmembermapping in one database, keyed by
-- organizationmember_id (mapping rows from before that column, NULL, are not compared),
-- with the queued ORGANIZATION_MEMBER_UPDATE outbox rows of the object beside them. The
-- fields are what RpcOrganizationMemberMappingUpdate.from_orm() takes and upsert_mapping()
-- writes: role, user_id, email, inviter_id, invite_status, and the organization.
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
          FROM /* TEMPLATE: source */sentry_organizationmember s
          LEFT JOIN /* TEMPLATE: replica */sentry_organizationmembermapping r ON r.organizationmember_id = s.id
         WHERE (r.organizationmember_id IS NULL
                OR (s.organization_id, s.role, s.user_id, s.email, s.inviter_id, s.invite_status)
                   IS DISTINCT FROM (r.organization_id, r.role, r.user_id, r.email, r.inviter_id, r.invite_status))
           /* IF: ids */AND s.id = ANY (@ids::bigint[])/* END: ids */
        UNION ALL
        SELECT r.organizationmember_id, false, true, -- orphans: a replica without its source
               NULL::text AS s_organization_id, r.organization_id::text AS r_organization_id,
               NULL::text AS s_role, r.role::text AS r_role,
               NULL::text AS s_user_id, r.user_id::text AS r_user_id,
               NULL::text AS s_email, r.email::text AS r_email,
               NULL::text AS s_inviter_id, r.inviter_id::text AS r_inviter_id,
               NULL::text AS s_invite_status, r.invite_status::text AS r_invite_status
          FROM /* TEMPLATE: replica */sentry_organizationmembermapping r
         WHERE NOT EXISTS (SELECT 1 FROM /* TEMPLATE: source */sentry_organizationmember s WHERE s.id = r.organizationmember_id)
           AND r.organizationmember_id IS NOT NULL
           /* IF: ids */AND r.organizationmember_id = ANY (@ids::bigint[])/* END: ids */
       ) d
  LEFT JOIN (SELECT x.object_identifier, min(x.shard_identifier) AS shard_identifier, count(*) AS pending_rows,
               min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
          FROM /* TEMPLATE: outbox */sentry_regionoutbox x
         WHERE x.shard_scope = @scope
           AND x.category = @category
           /* IF: ids */AND x.object_identifier = ANY (@ids::bigint[])/* END: ids */
         GROUP BY x.object_identifier) p ON p.object_identifier = d.object_id
 ORDER BY 1;

-- name: replica-source-organizationmember
-- The cell's side of organizationmember -> organizationmembermapping: every member with its
-- replicated fields, and every object with queued ORGANIZATION_MEMBER_UPDATE rows, in
-- object order.
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
          FROM /* TEMPLATE: source */sentry_organizationmember m
         /* IF: ids */WHERE m.id = ANY (@ids::bigint[])/* END: ids */
       ) s
  FULL JOIN (SELECT x.object_identifier, min(x.shard_identifier) AS shard_identifier, count(*) AS pending_rows,
               min(x.scheduled_for) AS pending_next, min(x.scheduled_for) <= now() AS pending_due
          FROM /* TEMPLATE: outbox */sentry_regionoutbox x
         WHERE x.shard_scope = @scope
           AND x.category = @category
           /* IF: ids */AND x.object_identifier = ANY (@ids::bigint[])/* END: ids */
         GROUP BY x.object_identifier) p ON p.object_identifier = s.object_id
 ORDER BY 1;

-- name: replica-rows-organizationmember
-- The control side of organizationmember -> organizationmembermapping: the member mappings
-- of the organizations one cell holds (their organization mapping names the cell), in
-- object order.
SELECT mm.organizationmember_id AS object_id,
       mm.organization_id::text AS r_organization_id,
       mm.role::text AS r_role,
       mm.user_id::text AS r_user_id,
       mm.email::text AS r_email,
       mm.inviter_id::text AS r_inviter_id,
       mm.invite_status::text AS r_invite_status
  FROM /* TEMPLATE: replica */sentry_organizationmembermapping mm
 WHERE mm.organizationmember_id IS NOT NULL
   AND EXISTS (SELECT 1
                 FROM /* TEMPLATE: org_replica */sentry_organizationmapping om
                WHERE om.organization_id = mm.organization_id
                  AND om.region_name = @cell)
   /* IF: ids */AND mm.organizationmember_id = ANY (@ids::bigint[])/* END: ids */
 ORDER BY mm.organizationmember_id;

-- name: replicate-source-organization
-- The organizations named that exist, with the identifiers Sentry's outbox_for_update()
-- gives them: ORGANIZATION_SCOPE's shard is the organization's own id.
SELECT o.id AS object_id, o.id AS shard_identifier, NULL::bigint AS user_id
  FROM /* TEMPLATE: source */sentry_organization o
 WHERE o.id = ANY (@ids::bigint[])
 ORDER BY o.id;

-- name: replicate-source-organizationmember
-- The members named that exist: shard = their organization, payload {"user_id": ...}.
SELECT m.id AS object_id, m.organization_id AS shard_identifier, m.user_id
  FROM /* TEMPLATE: source */sentry_organizationmember m
 WHERE m.id = ANY (@ids::bigint[])
 ORDER BY m.id;

-- name: replicate-replica-organization
-- The mappings of organizations that are gone: the deletion outbox names the same shard.
SELECT m.organization_id AS object_id, m.organization_id AS shard_identifier, NULL::bigint AS user_id
  FROM /* TEMPLATE: replica */sentry_organizationmapping m
 WHERE m.organization_id = ANY (@ids::bigint[])
 ORDER BY m.organization_id;

-- name: replicate-replica-organizationmember
-- The mappings of members that are gone: their organization is the deletion outbox's shard,
-- their user the payload's user_id (what the member carried when Sentry deleted it).
SELECT mm.organizationmember_id AS object_id, mm.organization_id AS shard_identifier, mm.user_id
  FROM /* TEMPLATE: replica */sentry_organizationmembermapping mm
 WHERE mm.organizationmember_id = ANY (@ids::bigint[])
 ORDER BY mm.organizationmember_id, mm.id DESC;

-- name: replicate-outbox
-- The outbox rows Sentry's outbox_for_update() saves, one per object: the pair's scope and
-- category, the object's shard and id, its payload ('' for none: SQL NULL), and a fresh
-- row's schedule (scheduled_from and date_added now, scheduled_for THE_PAST), so the shard
-- is due at the next scheduler run.
INSERT INTO /* TEMPLATE: outbox */sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT @scope::integer, x.shard, @category::integer, x.object, CAST(NULLIF(x.payload, '') AS /* TEMPLATE: payload_type */jsonb), now(), @the_past::timestamptz, now()
  FROM unnest(@shards::bigint[], @objects::bigint[], @payloads::text[]) AS x(shard, object, payload)
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
