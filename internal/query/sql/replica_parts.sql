-- The pieces of verify's and replicate's statements that differ by pair (sql/replica.sql):
-- the forms a field's value takes and the lists of fields. Go picks the pieces a pair's spec
-- names and puts them in the statements' regions, one after the other with commas between
-- (sqltemplate.Part): no SQL of a pair is written in Go.

-- name: replica-part-column
-- A column of the source row (alias s) or of a row it references: a field's value, the
-- outbox shard.
/* TEMPLATE: from */s./* TEMPLATE: column */slug

-- name: replica-part-flag
-- A BitField flag of a column (@mask, the flag's bit).
(/* TEMPLATE: from */s./* TEMPLATE: column */flags & @mask) <> 0

-- name: replica-part-lines
-- A column's non-empty lines joined by "\n" ('' for NULL): what a receiver writes for
-- "\n".join(model.get_allowed_origins()).
array_to_string(array_remove(string_to_array(coalesce(/* TEMPLATE: from */s./* TEMPLATE: column */allowed_origins, ''), E'\n'), ''), E'\n')

-- name: replica-part-cell
-- The cell's name: what the receiver stamps on the replica.
@cell::text

-- name: replica-part-as
-- A value read under its name (s_<field>, r_<field>, p_<key>).
/* TEMPLATE_BEGIN: value */s.slug/* TEMPLATE_END: value */ AS /* TEMPLATE: name */s_slug

-- name: replica-part-field
-- A field as a side's rows name it (s.s_<field>, r.r_<field>).
/* TEMPLATE: alias */s./* TEMPLATE: name */s_slug

-- name: replica-part-text
-- A field as text, what Go compares and prints.
/* TEMPLATE: alias */s./* TEMPLATE: name */s_slug::text AS /* TEMPLATE: name */s_slug

-- name: replica-part-digest
-- A secret field as it leaves the database: 'digest:' and the first 16 hex digits of the
-- SHA-256 of 'outboxctl:' and the value (the prefix keeps a digest of an api token from
-- being the start of Sentry's own hashed_token, the token's SHA-256). NULL stays NULL.
'digest:' || left(encode(sha256(convert_to('outboxctl:' || /* TEMPLATE: alias */s./* TEMPLATE: name */s_token::text, 'UTF8')), 'hex'), 16) AS /* TEMPLATE: name */s_token

-- name: replica-part-no-fields
-- A pair without fields (its replica only names the object): one NULL column in their place.
NULL::text AS no_fields

-- name: replica-part-differs
-- The monolith's typed comparison of the fields: true when one differs.
(/* TEMPLATE_BEGIN: sources */s.s_slug/* TEMPLATE_END: sources */)
                  IS DISTINCT FROM (/* TEMPLATE_BEGIN: replicas */r.r_slug/* TEMPLATE_END: replicas */)

-- name: replica-part-same
-- A pair without fields: nothing to differ.
false
