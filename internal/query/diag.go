package query

import (
	"fmt"
	"strings"
)

// Enum is an integer together with its registry name, for predicates and their notes.
type Enum struct {
	Value int
	Name  string
}

func (e *Enum) note() string { return e.Name }

// DefaultLimit caps the rows of any list that can be large.
const DefaultLimit = 20

// builder collects the values of one statement and the predicates of its WHERE clause.
type builder struct {
	args  Args
	where []string
}

func newBuilder() *builder { return &builder{args: Args{}} }

// arg registers a value and returns its placeholder.
func (b *builder) arg(name string, v any, note string) string {
	b.args[name] = Arg{Value: v, Note: note}
	return "@" + name
}

func (b *builder) and(pred string) { b.where = append(b.where, pred) }

// whereClause renders the predicates one per line so each value's note sits on its line.
func (b *builder) whereClause(indent string) string {
	if len(b.where) == 0 {
		return ""
	}
	return indent + "WHERE " + strings.Join(b.where, "\n"+indent+"  AND ")
}

// cellFilter adds the control silo's cell predicate on alias when --cell is set.
func (b *builder) cellFilter(t Target, alias string) {
	if t.Control() && t.Cell != "" {
		b.and(fmt.Sprintf("%s.%s = %s", alias, t.cellCol(), b.arg("cell", t.Cell, "")))
	}
}

func limitOrDefault(n int) int {
	if n <= 0 {
		return DefaultLimit
	}
	return n
}

// selectCell is the cell column in a select list ("o.region_name, ") for the control silo.
func selectCell(t Target, alias string) string {
	if t.Control() {
		return alias + "." + t.cellCol() + ", "
	}
	return ""
}

// ShardFilter narrows shard listings.
type ShardFilter struct {
	Scope    *Enum
	Category *Enum
	Shard    *int64
	Limit    int
	MinDepth int
}

// TopShards answers "which shards are deepest?" (Sentry's get_shard_depths_descending) and
// adds, for the few shards it returns, the real work left (coalesce groups), the categories
// present, the next attempt and the oldest message. The count is one index-only pass, like the
// guide's template; the extra columns are read only for the top rows.
func TopShards(t Target, f ShardFilter) Statement {
	b := newBuilder()
	if f.Scope != nil {
		b.and("o.shard_scope = " + b.arg("scope", f.Scope.Value, f.Scope.note()))
	}
	if f.Shard != nil {
		b.and("o.shard_identifier = " + b.arg("shard", *f.Shard, ""))
	}
	if f.Category != nil {
		b.and("o.category = " + b.arg("category", f.Category.Value, f.Category.note()))
	}
	b.cellFilter(t, "o")
	keys := strings.Join(t.shardCols("o"), ", ")
	having := ""
	if f.MinDepth > 0 {
		having = "\n    HAVING count(*) >= " + b.arg("min_depth", f.MinDepth, "")
	}
	catPred := ""
	if f.Category != nil {
		catPred = "\n       AND o.category = " + b.arg("category", f.Category.Value, f.Category.note())
	}
	depthOf := "rows"
	if f.Category != nil {
		depthOf = "rows of " + f.Category.Name
	}
	text := fmt.Sprintf(`WITH top AS (
    SELECT %[1]s, count(*) AS depth
      FROM %[2]s o
%[3]s
     GROUP BY %[1]s%[4]s
     ORDER BY depth DESC, %[1]s
     LIMIT %[5]s
)
SELECT %[6]stop.shard_scope, top.shard_identifier, top.depth,
       s.coalesce_groups, s.categories, s.next_attempt, s.next_attempt <= now() AS due,
       head.last_delay_seconds, head.last_attempt, s.oldest_message
  FROM top
 CROSS JOIN LATERAL (
    SELECT count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
           array_agg(DISTINCT o.category ORDER BY o.category) AS categories,
           min(o.scheduled_for) AS next_attempt,
           min(o.date_added) AS oldest_message
      FROM %[2]s o
     WHERE %[7]s%[8]s
 ) s
 CROSS JOIN LATERAL (
    SELECT extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt
      FROM %[2]s o
     WHERE %[7]s
     ORDER BY o.id
     LIMIT 1
 ) head
 ORDER BY top.depth DESC, %[9]s`,
		keys, t.From(), b.whereClause("     "), having, b.arg("limit", limitOrDefault(f.Limit), ""),
		selectCell(t, "top"), t.sameShard("o", "top", "     "), catPred, strings.Join(t.shardCols("top"), ", "))
	return Statement{
		Name: "top-shards",
		Doc: []string{
			"Deepest shards of " + t.Describe() + ", " + depthOf + " per shard.",
			"depth = rows waiting; coalesce_groups = distinct (category, object_identifier), the deliveries",
			"actually left (Sentry delivers only the newest row of each group); next_attempt = earliest",
			"scheduled_for, the shard is due when it is in the past; last_delay_seconds and last_attempt come",
			"from the lowest-id row, which Sentry locks and derives the next backoff step from.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// StuckShards answers "which shards are in backoff?": shards whose every row is scheduled in
// the future, so Sentry's scheduler (scheduled_for <= now) does not pick them. Instead of
// scanning the table like the guide's template, it walks the distinct shard keys with a
// recursive skip scan over the (shard_scope, shard_identifier, …) indexes and reads each
// shard's earliest scheduled_for from the (…, scheduled_for) index: one index probe per shard.
func StuckShards(t Target, f ShardFilter) Statement {
	b := newBuilder()
	keys := t.shardCols("o")
	keyList := strings.Join(keys, ", ")
	var filters []string
	if f.Scope != nil {
		filters = append(filters, "o.shard_scope = "+b.arg("scope", f.Scope.Value, f.Scope.note()))
	}
	if f.Shard != nil {
		filters = append(filters, "o.shard_identifier = "+b.arg("shard", *f.Shard, ""))
	}
	if t.Control() && t.Cell != "" {
		filters = append(filters, "o."+t.cellCol()+" = "+b.arg("cell", t.Cell, ""))
	}
	anchorWhere := ""
	stepWhere := ""
	if len(filters) > 0 {
		anchorWhere = "\n      WHERE " + strings.Join(filters, "\n        AND ")
		stepWhere = "\n           AND " + strings.Join(filters, "\n           AND ")
	}
	catFilter := ""
	if f.Category != nil {
		catFilter = fmt.Sprintf(`
       AND EXISTS (SELECT 1 FROM %s o
                    WHERE %s
                      AND o.category = %s)`,
			t.From(), t.sameShard("o", "k", "                    "), b.arg("category", f.Category.Value, f.Category.note()))
	}
	kCols := strings.Join(t.shardCols("k"), ", ")
	nCols := strings.Join(t.shardCols("nxt"), ", ")
	text := fmt.Sprintf(`WITH RECURSIVE shard_keys AS (
    (SELECT %[1]s
       FROM %[2]s o%[3]s
      ORDER BY %[1]s
      LIMIT 1)
    UNION ALL
    SELECT %[4]s
      FROM shard_keys k
     CROSS JOIN LATERAL (
        SELECT %[1]s
          FROM %[2]s o
         WHERE (%[1]s) > (%[5]s)%[6]s
         ORDER BY %[1]s
         LIMIT 1
     ) nxt
),
backing_off AS (
    SELECT %[5]s, h.next_attempt
      FROM shard_keys k
     CROSS JOIN LATERAL (
        SELECT o.scheduled_for AS next_attempt
          FROM %[2]s o
         WHERE %[11]s
         ORDER BY o.scheduled_for
         LIMIT 1
     ) h
     WHERE h.next_attempt > now()%[8]s
)
SELECT %[9]sk.shard_scope, k.shard_identifier, s.depth, s.coalesce_groups, s.categories,
       k.next_attempt, head.last_delay_seconds, head.last_attempt,
       s.oldest_message, s.newest_message
  FROM backing_off k
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth,
           count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
           array_agg(DISTINCT o.category ORDER BY o.category) AS categories,
           min(o.date_added) AS oldest_message,
           max(o.date_added) AS newest_message
      FROM %[2]s o
     WHERE %[7]s
 ) s
 CROSS JOIN LATERAL (
    SELECT extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt
      FROM %[2]s o
     WHERE %[7]s
     ORDER BY o.id
     LIMIT 1
 ) head
 ORDER BY s.depth DESC, %[5]s
 LIMIT %[10]s`,
		keyList, t.From(), anchorWhere, nCols, kCols, stepWhere, t.sameShard("o", "k", "     "), catFilter,
		selectCell(t, "k"), b.arg("limit", limitOrDefault(f.Limit), ""), t.sameShard("o", "k", "         "))
	return Statement{
		Name: "stuck-shards",
		Doc: []string{
			"Shards of " + t.Describe() + " in backoff: every row is scheduled in the future, so",
			"Sentry's scheduler (scheduled_for <= now()) skips them until next_attempt.",
			"last_delay_seconds = the current backoff step, from the shard's lowest-id row (Sentry doubles",
			"it from 2 s up to the 3600 s cap on every failed attempt; at 3600 suspect a poison message).",
			"last_attempt = when Sentry last claimed the shard. A shard claimed seconds ago may simply be",
			"draining right now: Sentry pushes the schedule forward before it processes.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// ShardKey names one shard: scope and identifier (and, in the control silo, the cell, which
// Target.Cell supplies when set).
type ShardKey struct {
	Scope Enum
	ID    int64
}

func (b *builder) shardPredicates(t Target, k ShardKey, alias string) {
	b.cellFilter(t, alias)
	b.and(fmt.Sprintf("%s.shard_scope = %s", alias, b.arg("scope", k.Scope.Value, k.Scope.Name)))
	b.and(fmt.Sprintf("%s.shard_identifier = %s", alias, b.arg("shard", k.ID, "")))
}

// ShardState answers "what is this shard waiting for?": its depth, its earliest
// scheduled_for, and the lowest-id row Sentry locks and computes the backoff from.
func ShardState(t Target, k ShardKey) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	distinct := ""
	order := "o.id"
	if t.Control() {
		distinct = "DISTINCT ON (o." + t.cellCol() + ") "
		order = "o." + t.cellCol() + ", o.id"
	}
	text := fmt.Sprintf(`SELECT %[1]s%[2]so.shard_scope, o.shard_identifier,
       count(*) OVER w AS depth,
       min(o.scheduled_for) OVER w AS next_attempt,
       min(o.scheduled_for) OVER w <= now() AS due,
       o.id AS head_id, o.category AS head_category, o.object_identifier AS head_object,
       o.scheduled_from AS last_attempt,
       extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
       now() AS observed_at
  FROM %[3]s o
%[4]s
WINDOW w AS (PARTITION BY %[5]s)
 ORDER BY %[6]s
 LIMIT %[7]s`,
		distinct, selectCell(t, "o"), t.From(), b.whereClause(" "), strings.Join(t.shardCols("o"), ", "), order,
		func() string {
			if t.Control() {
				return b.arg("limit", 1000, "")
			}
			return b.arg("limit", 1, "")
		}())
	return Statement{
		Name: "shard-state",
		Doc: []string{
			fmt.Sprintf("Backoff state of shard %s/%d in %s.", k.Scope.Name, k.ID, t.Describe()),
			"head_* = the lowest-id row: Sentry locks it to claim the shard and derives the next delay",
			"from it (next = now + min(2 × last_delay_seconds, 3600 s)). due = false means the shard waits",
			"until next_attempt; a new row makes it due at once (new rows are scheduled in 2016).",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// ShardCategories answers "what is in this shard?": depth per category (Sentry's
// get_shard_category_breakdown) with coalesce groups and ages.
func ShardCategories(t Target, k ShardKey) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	group := "o.category"
	if t.Control() {
		group = "o." + t.cellCol() + ", o.category"
	}
	text := fmt.Sprintf(`SELECT %[1]so.category, count(*) AS depth,
       count(DISTINCT o.object_identifier) AS coalesce_groups,
       min(o.date_added) AS oldest_message, max(o.date_added) AS newest_message
  FROM %[2]s o
%[3]s
 GROUP BY %[4]s
 ORDER BY depth DESC, %[4]s`, selectCell(t, "o"), t.From(), b.whereClause(" "), group)
	return Statement{
		Name: "shard-categories",
		Doc: []string{
			fmt.Sprintf("Per-category depth of shard %s/%d in %s.", k.Scope.Name, k.ID, t.Describe()),
			"coalesce_groups = distinct objects: the deliveries left for that category.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// ShardMessages answers "which messages wait in this shard?", newest first, each marked with
// its coalesce group: delivers = true for the row Sentry would deliver (the newest of its
// group, whose payload wins); false rows are superseded and will be deleted undelivered.
func ShardMessages(t Target, k ShardKey, limit int) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	groupJoin := t.sameShard("x", "o", "     ") + "\n       AND x.category = o.category\n       AND x.object_identifier = o.object_identifier"
	limitClause := ""
	if limit >= 0 {
		limitClause = "\n LIMIT " + b.arg("limit", limitOrDefault(limit), "")
	}
	text := fmt.Sprintf(`SELECT o.id, %[1]so.category, o.object_identifier,
       g.group_rows, o.id = g.newest_id AS delivers,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM %[2]s o
 CROSS JOIN LATERAL (
    SELECT count(*) AS group_rows, max(x.id) AS newest_id
      FROM %[2]s x
     WHERE %[3]s
 ) g
%[4]s
 ORDER BY o.id DESC%[5]s`, selectCell(t, "o"), t.From(), groupJoin, b.whereClause(" "), limitClause)
	return Statement{
		Name: "shard-messages",
		Doc: []string{
			fmt.Sprintf("Messages of shard %s/%d in %s, newest first.", k.Scope.Name, k.ID, t.Describe()),
			"group_rows = rows sharing (category, object_identifier); delivers = true marks the newest row",
			"of the group, the one Sentry delivers (its payload wins); the others are superseded.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// CategoryDepth answers "how many rows of this category are pending?", per scope: rows
// written under an older scope mapping (API_TOKEN_UPDATE was in USER_SCOPE until 2025) show
// as their own line instead of hiding.
func CategoryDepth(t Target, c Enum) Statement {
	b := newBuilder()
	b.and("o.category = " + b.arg("category", c.Value, c.Name))
	b.cellFilter(t, "o")
	text := fmt.Sprintf(`SELECT o.shard_scope, count(*) AS pending,
       count(DISTINCT (o.shard_scope, o.shard_identifier)) AS shards,
       count(DISTINCT o.object_identifier) AS objects,
       min(o.scheduled_for) AS next_attempt,
       min(o.date_added) AS oldest_message
  FROM %[1]s o
%[2]s
 GROUP BY o.shard_scope
 ORDER BY pending DESC, o.shard_scope`, t.From(), b.whereClause(" "))
	return Statement{
		Name: "category-depth",
		Doc: []string{
			fmt.Sprintf("Pending rows of category %s (%d) in %s, per scope.", c.Name, c.Value, t.Describe()),
			"shards = shards holding the category; objects = distinct objects (deliveries left, at most).",
			"No index leads with category: this reads the whole table (bounded by the statement timeout).",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// ObjectLookup says how to find the outboxes of one object.
type ObjectLookup struct {
	Category Enum
	// Scope is the category's registered scope; nil searches every scope (a full scan).
	Scope    *Enum
	ObjectID int64
	// ShardFromObject uses the object id as the shard id, for categories where they are equal;
	// the lookup then runs on the shard index.
	ShardFromObject bool
	Limit           int
}

// ObjectOutboxes answers "which outboxes exist for this object?".
func ObjectOutboxes(t Target, l ObjectLookup) Statement {
	b := newBuilder()
	b.cellFilter(t, "o")
	how := "it scans the table (no index leads with category); the statement timeout bounds it."
	if l.Scope != nil {
		b.and("o.shard_scope = " + b.arg("scope", l.Scope.Value, l.Scope.Name))
		how = "it scans the rows of " + l.Scope.Name + " (no index leads with category); the statement timeout bounds it."
	}
	if l.ShardFromObject && l.Scope != nil {
		b.and("o.shard_identifier = " + b.arg("shard", l.ObjectID, "the object is the shard for "+l.Category.Name))
		how = "the object id is the shard id for this category, so this is one probe of the shard index."
	}
	b.and("o.category = " + b.arg("category", l.Category.Value, l.Category.Name))
	b.and("o.object_identifier = " + b.arg("object", l.ObjectID, ""))
	text := fmt.Sprintf(`SELECT o.id, %[1]so.shard_scope, o.shard_identifier, o.category, o.object_identifier,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM %[2]s o
%[3]s
 ORDER BY o.id DESC
 LIMIT %[4]s`, selectCell(t, "o"), t.From(), b.whereClause(" "), b.arg("limit", limitOrDefault(l.Limit), ""))
	return Statement{
		Name: "object-outboxes",
		Doc: []string{
			fmt.Sprintf("Outboxes of %s object %d in %s, newest first.", l.Category.Name, l.ObjectID, t.Describe()),
			"The newest row is the one Sentry delivers; older rows of the same shard are superseded.",
			"Speed: " + how,
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// Depth answers "how many rows wait in total, and of which categories?" (Sentry's
// get_category_depths and get_total_outbox_count in one pass): the row with a NULL category
// is the total.
func Depth(t Target) Statement {
	b := newBuilder()
	b.cellFilter(t, "o")
	text := fmt.Sprintf(`SELECT o.category, count(*) AS depth
  FROM %[1]s o
%[2]s
 GROUP BY ROLLUP (o.category)
 ORDER BY o.category NULLS FIRST`, t.From(), b.whereClause(" "))
	return Statement{
		Name: "depth",
		Doc: []string{
			"Total depth of " + t.Describe() + " and depth per category.",
			"The first row (category NULL) is the total.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// Message answers "what is this outbox row, and where does it stand?": the row, its coalesce
// group, and its shard's head.
func Message(t Target, id int64) Statement {
	b := newBuilder()
	b.and("o.id = " + b.arg("id", id, ""))
	groupJoin := t.sameShard("x", "o", "     ") + "\n       AND x.category = o.category\n       AND x.object_identifier = o.object_identifier"
	text := fmt.Sprintf(`SELECT o.id, %[1]so.shard_scope, o.shard_identifier, o.category, o.object_identifier,
       g.group_rows, g.newest_id, o.id = g.newest_id AS delivers,
       sh.shard_depth, sh.head_id, o.id = sh.head_id AS is_head,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM %[2]s o
 CROSS JOIN LATERAL (
    SELECT count(*) AS group_rows, max(x.id) AS newest_id
      FROM %[2]s x
     WHERE %[3]s
 ) g
 CROSS JOIN LATERAL (
    SELECT count(*) AS shard_depth, min(x.id) AS head_id
      FROM %[2]s x
     WHERE %[4]s
 ) sh
%[5]s`, selectCell(t, "o"), t.From(), groupJoin, t.sameShard("x", "o", "     "), b.whereClause(" "))
	return Statement{
		Name: "message",
		Doc: []string{
			fmt.Sprintf("Outbox row %d of %s with its coalesce group and shard.", id, t.Describe()),
			"delivers = true: this row is the newest of its group and is the one Sentry delivers.",
			"is_head = true: this row is the shard's lowest id, the one Sentry locks and delivers first",
			"(a poison message blocks its whole shard from here).",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// tidy drops the lines an empty optional clause leaves blank, so printed SQL has no holes.
func tidy(text string) string {
	lines := strings.Split(text, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
