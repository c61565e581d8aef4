package query

import (
	"fmt"
	"sort"
	"strconv"
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
	// Exact counts every coalesce group instead of stopping at GroupCap.
	Exact bool
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
		catPred = "\n                                 AND o.category = " + b.arg("category", f.Category.Value, f.Category.note())
	}
	depthOf := "rows"
	if f.Category != nil {
		depthOf = "rows of " + f.Category.Name
	}
	text := fmt.Sprintf(`WITH top AS (
    -- total_shards: how many shards matched before the LIMIT (the footer's "of N").
    SELECT %[1]s, count(*) AS depth, count(*) OVER () AS total_shards
      FROM %[2]s o
%[3]s
     GROUP BY %[1]s%[4]s
     ORDER BY depth DESC, %[1]s
     LIMIT %[5]s
)
SELECT %[6]stop.shard_scope, top.shard_identifier, top.depth,
%[11]s AS coalesce_groups,
%[12]s AS categories,
       n.next_attempt, n.next_attempt <= now() AS due,
       head.last_delay_seconds, head.last_attempt, head.oldest_message, top.total_shards
  FROM top
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM %[2]s o
     WHERE %[10]s
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 CROSS JOIN LATERAL (
    SELECT extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt,
           o.date_added AS oldest_message
      FROM %[2]s o
     WHERE %[10]s
     ORDER BY o.id
     LIMIT 1
 ) head
 ORDER BY top.depth DESC, %[9]s`,
		keys, t.From(), b.whereClause("     "), having, b.arg("limit", limitOrDefault(f.Limit), ""),
		selectCell(t, "top"), t.sameShard("o", "top", "                               "), catPred, strings.Join(t.shardCols("top"), ", "),
		t.sameShard("o", "top", "     "),
		groupCount(t, b, f, "top", catPred), categoryList(t, b, "top", catPred))
	return Statement{
		Name: "top-shards",
		Doc: []string{
			"Deepest shards of " + t.Describe() + ", " + depthOf + " per shard.",
			"depth = rows waiting; coalesce_groups = distinct (category, object_identifier), the deliveries",
			"actually left (Sentry delivers only the newest row of each group); next_attempt = earliest",
			"scheduled_for, the shard is due when it is in the past; last_delay_seconds and last_attempt come",
			"from the lowest-id row, which Sentry locks and derives the next backoff step from; its",
			"date_added is the shard's oldest message. Only the top rows pay for these columns;",
			"coalesce_groups is counted up to 100 (100 means at least; outboxctl shards --exact counts all).",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// OnePassRows is the depth up to which TopShards and StuckShards read a shard's coalesce
// groups and categories in one pass over its (…, category, object_identifier) index entries,
// in order, instead of one index probe per group or category. A probe (a descent of the
// 117 MB index of the bench data) costs about as much as reading 100 entries in order, so a
// shard of a few hundred rows in 100 groups is read in a tenth of the time by a pass; past
// this depth the probes are cheaper whatever the shard holds (the hot shard: 200,000 rows,
// 100 probes).
const OnePassRows = 2000

// groupCount is the coalesce_groups column of TopShards and StuckShards. Exact, it counts the
// distinct (category, object_identifier) of the shard. Otherwise it stops at GroupCap: a
// shard of at most OnePassRows rows (its depth, in alias.depth) is read in one pass; a deeper
// one is walked on the (…, category, object_identifier) index, one probe per group, so the
// hot shard's few groups come out exact in a few probes, and a shard of many distinct objects
// says "at least GroupCap" without reading all of its rows.
func groupCount(t Target, b *builder, f ShardFilter, alias, catPred string) string {
	if f.Exact {
		return fmt.Sprintf(`       (SELECT count(*) FROM (SELECT DISTINCT o.category, o.object_identifier
                                FROM %s o
                               WHERE %s%s) g)`, t.From(), t.sameShard("o", alias, "                               "), catPred)
	}
	groupCap := b.arg("group_cap", GroupCap, "count at most this many groups")
	onePass := fmt.Sprintf(`(SELECT count(*) FROM (
                SELECT DISTINCT o.category, o.object_identifier
                  FROM %[1]s o
                 WHERE %[2]s
                 ORDER BY o.category, o.object_identifier
                 LIMIT %[3]s) g)`, t.From(), shardIn(t, alias, catPred, "                 "), groupCap)
	probed := fmt.Sprintf(`(WITH RECURSIVE g AS (
          (SELECT o.category, o.object_identifier, 1 AS n
             FROM %[1]s o
            WHERE %[2]s
            ORDER BY o.category, o.object_identifier
            LIMIT 1)
          UNION ALL
          SELECT nx.category, nx.object_identifier, g.n + 1
            FROM g
           CROSS JOIN LATERAL (
              SELECT o.category, o.object_identifier
                FROM %[1]s o
               WHERE %[3]s
                 AND (o.category, o.object_identifier) > (g.category, g.object_identifier)%[4]s
               ORDER BY o.category, o.object_identifier
               LIMIT 1
           ) nx
           WHERE g.n < %[5]s)
        SELECT count(*) FROM g)`,
		t.From(), shardIn(t, alias, catPred, "            "),
		t.sameShard("o", alias, "               "), catIndent(catPred, "                 "), groupCap)
	return byDepth(b, alias, onePass, probed)
}

// byDepth is a column of TopShards and StuckShards computed one of two equal ways by the
// shard's depth (alias.depth): onePass for a shard of at most OnePassRows rows, probed for a
// deeper one.
func byDepth(b *builder, alias, onePass, probed string) string {
	return fmt.Sprintf("       CASE WHEN %s.depth <= %s\n       THEN %s\n       ELSE %s END", alias,
		b.arg("one_pass_rows", OnePassRows, "a shard of at most this many rows is read in one pass, a deeper one probed"),
		onePass, probed)
}

// shardIn is the WHERE body that keeps alias's shard (and catPred, when set), for a WHERE
// whose continuation lines start at indent.
func shardIn(t Target, alias, catPred, indent string) string {
	return t.sameShard("o", alias, indent) + catIndent(catPred, indent+"  ")
}

// categoryList is the categories column: the shard's distinct categories, read in one pass
// for a shard of at most OnePassRows rows, otherwise walked on the
// (…, category, object_identifier) index, one probe per category (there are fewer than 50).
func categoryList(t Target, b *builder, alias, catPred string) string {
	onePass := fmt.Sprintf(`ARRAY(SELECT DISTINCT o.category
                    FROM %[1]s o
                   WHERE %[2]s
                   ORDER BY o.category)`, t.From(), shardIn(t, alias, catPred, "                   "))
	probed := fmt.Sprintf(`ARRAY(WITH RECURSIVE c AS (
               (SELECT o.category
                  FROM %[1]s o
                 WHERE %[2]s
                 ORDER BY o.category
                 LIMIT 1)
               UNION ALL
               SELECT nx.category
                 FROM c
                CROSS JOIN LATERAL (
                   SELECT o.category
                     FROM %[1]s o
                    WHERE %[3]s
                      AND o.category > c.category%[4]s
                    ORDER BY o.category
                    LIMIT 1
                ) nx)
             SELECT c.category FROM c)`,
		t.From(), shardIn(t, alias, catPred, "                 "),
		t.sameShard("o", alias, "                    "), catIndent(catPred, "                      "))
	return byDepth(b, alias, onePass, probed)
}

// catIndent re-indents the optional category predicate for a WHERE at another depth.
func catIndent(pred, indent string) string {
	if pred == "" {
		return ""
	}
	return "\n" + indent + "AND " + strings.TrimPrefix(strings.TrimSpace(pred), "AND ")
}

// StuckShards answers "which shards are in backoff?": shards whose every row is scheduled in
// the future, so Sentry's scheduler (scheduled_for <= now) does not pick them. Rows in the
// future exist only in shards Sentry has claimed (new rows are scheduled in 2016), so the
// candidates come from one index-only pass over the narrow (…, scheduled_for) index with
// scheduled_for > now(), and each candidate is confirmed by one probe for its earliest
// scheduled_for: a shard that also holds a fresh row is due, not stuck (the guide's template
// counts it as stuck). In a confirmed shard every row is in the future, so the candidate
// pass's count is already its depth.
func StuckShards(t Target, f ShardFilter) Statement {
	b := newBuilder()
	b.and("o.scheduled_for > now()")
	if f.Scope != nil {
		b.and("o.shard_scope = " + b.arg("scope", f.Scope.Value, f.Scope.note()))
	}
	if f.Shard != nil {
		b.and("o.shard_identifier = " + b.arg("shard", *f.Shard, ""))
	}
	b.cellFilter(t, "o")
	keyList := strings.Join(t.shardCols("o"), ", ")
	catFilter := ""
	if f.Category != nil {
		catFilter = fmt.Sprintf(`
       AND EXISTS (SELECT 1 FROM %s o
                    WHERE %s
                      AND o.category = %s)`,
			t.From(), t.sameShard("o", "k", "                    "), b.arg("category", f.Category.Value, f.Category.note()))
	}
	minDepth := ""
	if f.MinDepth > 0 {
		minDepth = "\n     WHERE k.depth >= " + b.arg("min_depth", f.MinDepth, "")
	}
	text := fmt.Sprintf(`WITH candidates AS (
    SELECT %[1]s, count(*) AS depth
      FROM %[2]s o
%[3]s
     GROUP BY %[1]s
),
backing_off AS (
    SELECT %[4]s, k.depth, h.next_attempt
      FROM candidates k
     CROSS JOIN LATERAL (
        SELECT o.scheduled_for AS next_attempt
          FROM %[2]s o
         WHERE %[5]s
         ORDER BY o.scheduled_for
         LIMIT 1
     ) h
     WHERE h.next_attempt > now()%[6]s
),
ranked AS (
    -- total_shards: how many shards are backing off before the LIMIT (the footer's "of N").
    SELECT k.*, count(*) OVER () AS total_shards
      FROM backing_off k%[9]s
     ORDER BY k.depth DESC, %[4]s
     LIMIT %[10]s
)
SELECT %[7]sk.shard_scope, k.shard_identifier, k.depth,
%[11]s AS coalesce_groups,
%[12]s AS categories,
       k.next_attempt, head.last_delay_seconds, head.last_attempt,
       head.oldest_message, k.total_shards
  FROM ranked k
 CROSS JOIN LATERAL (
    SELECT extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt,
           o.date_added AS oldest_message
      FROM %[2]s o
     WHERE %[8]s
     ORDER BY o.id
     LIMIT 1
 ) head
 ORDER BY k.depth DESC, %[4]s`,
		keyList, t.From(), b.whereClause("     "), strings.Join(t.shardCols("k"), ", "),
		t.sameShard("o", "k", "         "), catFilter, selectCell(t, "k"), t.sameShard("o", "k", "     "),
		minDepth, b.arg("limit", limitOrDefault(f.Limit), ""), groupCount(t, b, f, "k", ""), categoryList(t, b, "k", ""))
	return Statement{
		Name: "stuck-shards",
		Doc: []string{
			"Shards of " + t.Describe() + " in backoff: every row is scheduled in the future, so",
			"Sentry's scheduler (scheduled_for <= now()) skips them until next_attempt.",
			"last_delay_seconds = the current backoff step, from the shard's lowest-id row (Sentry doubles",
			"it from 2 s up to the 3600 s cap on every failed attempt; at 3600 suspect a poison message).",
			"last_attempt = when Sentry last claimed the shard. A shard claimed seconds ago may simply be",
			"draining right now: Sentry pushes the schedule forward before it processes.",
			"oldest_message = date_added of the lowest-id row (ids and date_added both grow with time).",
			"coalesce_groups is counted up to 100 (100 means at least; --exact counts all).",
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
// scheduled_for, and the lowest-id row Sentry locks and computes the backoff from. The head
// row is one probe of the (…, id) index; depth and next attempt are one index-only pass over
// the narrow (…, scheduled_for) index, so a 200,000-row shard costs milliseconds, not a read
// of every row. In the control silo there is one head row per cell.
func ShardState(t Target, k ShardKey) Statement { return shardState(t, k, nil) }

// ShardStateGivenDepth is ShardState for a caller that has already counted the shard in the
// same snapshot (inspect shard reads shard-categories first, whose depths sum to the shard's):
// the depth is bound, not counted again, and the next attempt is one probe of the
// (…, scheduled_for) index. On a 200,000-row shard the count is a pass over every index
// entry (15–20 ms here), the whole of this statement's cost. depth maps each cell to its
// depth in the control silo, and "" to the shard's in the cell silo; a cell it does not name
// has depth 0.
func ShardStateGivenDepth(t Target, k ShardKey, depth map[string]int64) Statement {
	if depth == nil {
		depth = map[string]int64{}
	}
	return shardState(t, k, depth)
}

// CategoryDepthSums sums the depth column of a shard-categories result per cell (the key "" in
// the cell silo), for ShardStateGivenDepth. A depth that is not an integer is an error, never
// a silent 0: the sum is printed as the shard's depth.
func CategoryDepthSums(t Target, categories *Result) (map[string]int64, error) {
	depthC, cellC := categories.Col("depth"), -1
	if t.Control() {
		cellC = categories.Col(t.CellColumnName())
	}
	if depthC < 0 || (t.Control() && cellC < 0) {
		return nil, fmt.Errorf("%s: no depth or cell column in %v", categories.Statement, categories.Columns)
	}
	out := map[string]int64{}
	for _, r := range categories.Rows {
		d, ok := r[depthC].(int64)
		if !ok {
			return nil, fmt.Errorf("%s: depth %v is not an integer", categories.Statement, r[depthC])
		}
		cell := ""
		if cellC >= 0 {
			if cell, ok = r[cellC].(string); !ok {
				return nil, fmt.Errorf("%s: cell %v is not text", categories.Statement, r[cellC])
			}
		}
		out[cell] += d
	}
	return out, nil
}

func shardState(t Target, k ShardKey, given map[string]int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	distinct, limit := "", b.arg("limit", 1, "")
	order := func(alias string) string { return alias + ".id" }
	if t.Control() {
		distinct = "DISTINCT ON (o." + t.cellCol() + ") "
		order = func(alias string) string { return alias + "." + t.cellCol() + ", " + alias + ".id" }
		limit = b.arg("limit", 1000, "")
	}
	headCols := "o.id, " + selectCell(t, "o") + "o.shard_scope, o.shard_identifier, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for"
	doc := []string{
		fmt.Sprintf("Backoff state of shard %s/%d in %s.", k.Scope.Name, k.ID, t.Describe()),
		"head_* = the lowest-id row: Sentry locks it to claim the shard and derives the next delay",
		"from it (next = now + min(2 × last_delay_seconds, 3600 s)). due = false means the shard waits",
		"until next_attempt; a new row makes it due at once (new rows are scheduled in 2016).",
	}
	d := fmt.Sprintf(`SELECT count(*) AS depth, min(x.scheduled_for) AS next_attempt
      FROM %s x
     WHERE %s`, t.From(), t.sameShard("x", "h", "     "))
	if given != nil {
		var depth string
		if !t.Control() {
			depth = b.arg("depth", given[""], "rows of the shard: the sum of shard-categories' depth")
		} else {
			cells := make([]string, 0, len(given))
			for c := range given {
				cells = append(cells, c)
			}
			sort.Strings(cells)
			depths := make([]int64, len(cells))
			for i, c := range cells {
				depths[i] = given[c]
			}
			depth = fmt.Sprintf(`coalesce((SELECT g.depth FROM unnest(%s::text[], %s::bigint[]) AS g(cell, depth)
             WHERE g.cell = h.%s), 0)`,
				b.arg("cells", cells, ""), b.arg("depths", depths, "rows per cell: the sums of shard-categories' depth"), t.cellCol())
		}
		d = fmt.Sprintf(`SELECT %s::bigint AS depth,
           (SELECT x.scheduled_for FROM %s x
             WHERE %s
             ORDER BY x.scheduled_for
             LIMIT 1) AS next_attempt`, depth, t.From(), t.sameShard("x", "h", "             "))
		doc = append(doc, "depth is given: shard-categories counted the shard in the same snapshot.")
	}
	text := fmt.Sprintf(`SELECT %[1]sh.shard_scope, h.shard_identifier,
       d.depth, d.next_attempt, d.next_attempt <= now() AS due,
       h.id AS head_id, h.category AS head_category, h.object_identifier AS head_object,
       h.scheduled_from AS last_attempt,
       extract(epoch FROM h.scheduled_for - h.scheduled_from)::float8 AS last_delay_seconds,
       now() AS observed_at
  FROM (
    SELECT %[2]s%[3]s
      FROM %[4]s o
%[5]s
     ORDER BY %[6]s
     LIMIT %[7]s
  ) h
 CROSS JOIN LATERAL (
    %[8]s
 ) d
 ORDER BY %[9]s`,
		selectCell(t, "h"), distinct, headCols, t.From(), b.whereClause("     "), order("o"), limit,
		d, order("h"))
	return Statement{Name: "shard-state", Doc: doc, Text: tidy(text), Args: b.args}
}

// ShardCategories answers "what is in this shard?": depth per category (Sentry's
// get_shard_category_breakdown) with coalesce groups and ages. The categories are walked on
// the (…, category, object_identifier) index, one probe each; each category's depth and
// groups are an index-only range of that index, already in group order (no sort, no heap);
// its ages are one probe at each end of the (…, id) index: the category's lowest-id and
// highest-id rows (ids and date_added grow together). The walk also keeps the planner's
// estimates small, so it never pays for JIT compilation.
func ShardCategories(t Target, k ShardKey) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	keys := strings.Join(append(t.shardCols("o"), "o.category"), ", ")
	walk := "o.category"
	prev := "c.category"
	if t.Control() {
		walk = "o." + t.cellCol() + ", o.category"
		prev = "c." + t.cellCol() + ", c.category"
	}
	first := b.whereClause("      ")
	b.and(fmt.Sprintf("(%s) > (%s)", walk, prev))
	next := b.whereClause("         ")
	b.where = b.where[:len(b.where)-1]
	order := prev
	// category + 0 keeps the probe on the (…, id) index: on the category index PostgreSQL
	// would read and sort every row of the category to find its lowest id.
	probe := func(dir string) string {
		return fmt.Sprintf(`(SELECT x.date_added FROM %s x
         WHERE %s
           AND x.category + 0 = c.category
         ORDER BY x.id%s LIMIT 1)`, t.From(), t.sameShard("x", "c", "         "), dir)
	}
	text := fmt.Sprintf(`WITH RECURSIVE c AS (
    (SELECT %[1]s
       FROM %[2]s o
%[3]s
      ORDER BY %[4]s
      LIMIT 1)
    UNION ALL
    SELECT nx.*
      FROM c
     CROSS JOIN LATERAL (
        SELECT %[1]s
          FROM %[2]s o
%[5]s
         ORDER BY %[4]s
         LIMIT 1
     ) nx
)
SELECT %[6]sc.category, d.depth, d.coalesce_groups,
       %[7]s AS oldest_message,
       %[8]s AS newest_message
  FROM c
 CROSS JOIN LATERAL (
    SELECT sum(g.n)::bigint AS depth, count(*) AS coalesce_groups
      FROM (SELECT count(*) AS n
              FROM %[2]s x
             WHERE %[9]s
               AND x.category = c.category
             GROUP BY x.object_identifier) g
 ) d
 ORDER BY d.depth DESC, %[10]s`, keys, t.From(), first, walk, next, selectCell(t, "c"), probe(""), probe(" DESC"),
		t.sameShard("x", "c", "             "), order)
	return Statement{
		Name: "shard-categories",
		Doc: []string{
			fmt.Sprintf("Per-category depth of shard %s/%d in %s.", k.Scope.Name, k.ID, t.Describe()),
			"coalesce_groups = distinct objects: the deliveries left for that category.",
			"oldest_message / newest_message = date_added of the category's lowest-id / highest-id row.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// GroupCap bounds the per-message coalesce group count of ShardMessages unless exact: a
// count of GroupCap means "at least GroupCap".
const GroupCap = 100

// ShardMessages answers "which messages wait in this shard?", newest first, each marked with
// its coalesce group: delivers = true for the row Sentry would deliver (the newest of its
// group, whose payload wins); false rows are superseded and will be deleted undelivered.
// The shard's head (its lowest row: the one Sentry locks and is blocked on) always comes
// first, marked head = true, even when it is older than the page.
// The page is read first from the (…, id) index; "is there a newer row in my group" then
// looks only at rows newer than the message (fewer than the page size), and the group size
// is counted up to GroupCap on the (…, category, object_identifier) index unless exact.
func ShardMessages(t Target, k ShardKey, limit int, exact bool) Statement {
	return ShardMessagesOrdered(t, k, limit, exact, false)
}

// ShardMessagesOrdered is ShardMessages, the page taken from the oldest rows when oldest is
// set (--order oldest). Rows far from the shard's newest end (the head, an oldest page) ask
// "is there a newer row in my group" of the group's own index instead of walking every
// newer row of the shard.
func ShardMessagesOrdered(t Target, k ShardKey, limit int, exact, oldest bool) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	capClause := ""
	if !exact {
		capClause = "\n          LIMIT " + b.arg("group_cap", GroupCap, "count at most this many")
	}
	dir, order := "DESC", "newest"
	if oldest {
		dir, order = "ASC", "oldest"
	}
	text := fmt.Sprintf(`SELECT p.id, %[1]sp.category, p.object_identifier,
       (SELECT count(*) FROM (
          SELECT 1 FROM %[2]s x
           WHERE %[3]s
             AND x.category = p.category
             AND x.object_identifier = p.object_identifier%[4]s) g) AS group_rows,
       CASE WHEN p.head OR %[9]s THEN NOT EXISTS (
          SELECT 1 FROM %[2]s x
           WHERE %[3]s
             AND x.category = p.category
             AND x.object_identifier = p.object_identifier
             AND x.id > p.id)
       ELSE NOT EXISTS (
          SELECT 1 FROM (
             SELECT x.category, x.object_identifier FROM %[2]s x
              WHERE %[7]s
                AND x.id > p.id
             OFFSET 0) newer
           WHERE newer.category = p.category
             AND newer.object_identifier = p.object_identifier) END AS delivers,
       p.payload::text AS payload,
       p.scheduled_from, p.scheduled_for, p.date_added, p.head
  FROM (
    SELECT h.*, true AS head
      FROM (SELECT o.*
              FROM %[2]s o
%[8]s
             ORDER BY o.id
             LIMIT 1) h
    UNION ALL
    SELECT r.*, false AS head
      FROM (SELECT o.*
              FROM %[2]s o
%[8]s
             ORDER BY o.id %[10]s
             LIMIT %[6]s) r
     WHERE r.id > (SELECT min(o.id) FROM %[2]s o
%[8]s)
  ) p
 ORDER BY p.head DESC, p.id %[10]s`, selectCell(t, "p"), t.From(), t.sameShard("x", "p", "           "), capClause,
		b.whereClause("     "), b.arg("limit", limitOrDefault(limit), ""), t.sameShard("x", "p", "              "),
		b.whereClause("             "), strconv.FormatBool(oldest), dir)
	countDoc := fmt.Sprintf("group_rows = rows sharing (category, object_identifier), counted up to %d (%d means at least).", GroupCap, GroupCap)
	if exact {
		countDoc = "group_rows = rows sharing (category, object_identifier)."
	}
	return Statement{
		Name: "shard-messages",
		Doc: []string{
			fmt.Sprintf("Messages of shard %s/%d in %s: the head (head = true: the lowest row, which Sentry locks and is blocked on), then the %s.", k.Scope.Name, k.ID, t.Describe(), order),
			countDoc,
			"delivers = true marks the newest row of its group, the one Sentry delivers (its payload wins);",
			"the others are superseded.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// ShardMessagesAll lists every message of a shard, newest first, marked like ShardMessages.
// The coalesce groups are aggregated once and joined, so the cost is two passes over the
// shard however large it is, and rows stream out in id order (inspect shard --all).
func ShardMessagesAll(t Target, k ShardKey) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "x")
	groupWhere := b.whereClause("     ")
	b.where = nil
	b.shardPredicates(t, k, "o")
	cellKey, cellJoin := "", ""
	if t.Control() {
		cellKey = "x." + t.cellCol() + ", "
		cellJoin = "\n   AND g." + t.cellCol() + " = o." + t.cellCol()
	}
	text := fmt.Sprintf(`WITH groups AS MATERIALIZED (
    SELECT %[1]sx.category, x.object_identifier, count(*) AS group_rows, max(x.id) AS newest_id
      FROM %[2]s x
%[3]s
     GROUP BY %[1]sx.category, x.object_identifier
)
SELECT o.id, %[4]so.category, o.object_identifier,
       g.group_rows, o.id = g.newest_id AS delivers,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM %[2]s o
  JOIN groups g ON g.category = o.category
   AND g.object_identifier = o.object_identifier%[5]s
%[6]s
 ORDER BY o.id DESC`, cellKey, t.From(), groupWhere, selectCell(t, "o"), cellJoin, b.whereClause(" "))
	return Statement{
		Name: "shard-messages-all",
		Doc: []string{
			fmt.Sprintf("Every message of shard %s/%d in %s, newest first.", k.Scope.Name, k.ID, t.Describe()),
			"group_rows = rows sharing (category, object_identifier); delivers = true marks the newest row",
			"of the group, the one Sentry delivers (its payload wins); the others are superseded.",
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
