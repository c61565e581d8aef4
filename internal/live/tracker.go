package live

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/render"
)

// Tracker follows numeric columns of a watched table from frame to frame, row by row (a
// row is known by its Key columns), and adds what moved: the change since the last frame,
// the rate per second, and a sparkline of the last Keep values.
type Tracker struct {
	Key     []string // columns identifying a row (scope and shard)
	Columns []string // numeric columns to follow (depth)
	Keep    int      // values in the sparkline; 0 means 12
	hist    map[string][]sample
}

type sample struct {
	at time.Time
	v  float64
}

// The suffixes of the columns Annotate adds after each followed column.
const (
	SuffixChange = "_change"
	SuffixRate   = "_per_s"
	SuffixTrend  = "_trend"
)

// Annotate returns a copy of doc where every table holding the Key and followed columns
// has, after each followed column c, c_change (since the previous frame), c_per_s (rate
// per second) and c_trend (sparkline, terminal only). A row seen for the first time has
// no change and no rate yet. Rows gone from the frame are forgotten.
func (tr *Tracker) Annotate(doc render.Doc, at time.Time) render.Doc {
	if tr.hist == nil {
		tr.hist = map[string][]sample{}
	}
	seen := map[string][]sample{}
	out := make(render.Doc, len(doc))
	for i, s := range doc {
		if s.Table != nil && tr.applies(s.Table) {
			s.Table = tr.annotate(s.Table, at, seen)
		}
		out[i] = s
	}
	tr.hist = seen
	return out
}

func (tr *Tracker) applies(t *render.Table) bool {
	for _, c := range append(append([]string{}, tr.Key...), tr.Columns...) {
		if index(t.Columns, c) < 0 {
			return false
		}
	}
	return true
}

func (tr *Tracker) annotate(t *render.Table, at time.Time, seen map[string][]sample) *render.Table {
	out := *t
	out.Columns, out.Rows = nil, nil
	out.Labels = copyMap(t.Labels)
	out.HumanOnly = copyMap(t.HumanOnly)
	out.Priority = copyMap(t.Priority)
	added := map[int][]string{} // index of a followed column: the columns added after it
	for _, c := range tr.Columns {
		i := index(t.Columns, c)
		added[i] = []string{c + SuffixChange, c + SuffixRate, c + SuffixTrend}
		out.Labels[c+SuffixChange], out.Labels[c+SuffixRate], out.Labels[c+SuffixTrend] = "Δ", "/s", "trend"
		out.HumanOnly[c+SuffixTrend] = true
		// What moved is what a narrow terminal keeps longest after the row's identity.
		out.Priority[c+SuffixTrend], out.Priority[c+SuffixRate] = 45, 55
	}
	for i, c := range t.Columns {
		out.Columns = append(out.Columns, c)
		out.Columns = append(out.Columns, added[i]...)
	}
	for _, r := range t.Rows {
		key := tr.rowKey(t, r)
		var row []any
		for i, v := range r {
			row = append(row, v)
			if _, ok := added[i]; ok {
				id := key + "\x00" + t.Columns[i]
				hist := append(tr.hist[id], sample{at, number(v)})
				if len(hist) > tr.keep() {
					hist = hist[len(hist)-tr.keep():]
				}
				seen[id] = hist
				row = append(row, change(hist)...)
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return &out
}

// change is the change, the rate and the sparkline of a series (nil change and rate for a
// first value).
func change(h []sample) []any {
	line := Sparkline(values(h))
	if len(h) < 2 {
		return []any{nil, nil, line}
	}
	a, b := h[len(h)-2], h[len(h)-1]
	if math.IsNaN(a.v) || math.IsNaN(b.v) {
		return []any{nil, nil, line} // a cell that is not a number (NULL) has no change
	}
	d := b.v - a.v
	var rate any
	if secs := b.at.Sub(a.at).Seconds(); secs > 0 {
		rate = math.Round(d/secs*10) / 10
	}
	return []any{signed(d), rate, line}
}

// signed shows a change with its sign: "+12", "-3", "0".
func signed(d float64) render.Styled {
	s := strconv.FormatFloat(d, 'f', -1, 64)
	switch {
	case d > 0:
		return render.Styled{Text: "+" + s, Tone: render.ToneWarn}
	case d < 0:
		return render.Styled{Text: s, Tone: render.ToneGood}
	}
	return render.Styled{Text: s, Tone: render.ToneMuted}
}

func (tr *Tracker) keep() int {
	if tr.Keep > 0 {
		return tr.Keep
	}
	return 12
}

func (tr *Tracker) rowKey(t *render.Table, r []any) string {
	parts := make([]string, len(tr.Key))
	for i, k := range tr.Key {
		parts[i] = render.Plain(r[index(t.Columns, k)])
	}
	return strings.Join(parts, "\x00")
}

func values(h []sample) []float64 {
	out := make([]float64, len(h))
	for i, s := range h {
		out[i] = s.v
	}
	return out
}

// number reads a numeric cell; anything else is NaN.
func number(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	case render.Ratio:
		return float64(x)
	}
	return math.NaN()
}

var bars = []rune("▁▂▃▄▅▆▇█") //nolint:gochecknoglobals // constant

// Sparkline draws values as bars from the lowest (▁) to the highest (█); a flat series is
// all ▁, and a value that is not a number is a space.
func Sparkline(vals []float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	var b strings.Builder
	for _, v := range vals {
		switch {
		case math.IsNaN(v):
			b.WriteRune(' ')
		case hi == lo:
			b.WriteRune(bars[0])
		default:
			b.WriteRune(bars[int(math.Round((v-lo)/(hi-lo)*float64(len(bars)-1)))])
		}
	}
	return b.String()
}

func index(cols []string, c string) int {
	for i, x := range cols {
		if x == c {
			return i
		}
	}
	return -1
}

func copyMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
