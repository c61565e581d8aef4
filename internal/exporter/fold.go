package exporter

import (
	"cmp"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// OtherValue is the label value the values past a label's cap are summed under.
const OtherValue = "other"

// LabelCaps are the most distinct values each label read from the database keeps per
// context and collection: cell (region_name, any text), scope and category (an integer
// the registry may not name: UNKNOWN(n)). Sentry has 13 scopes and 49 categories and a
// handful of cells; a table of junk values (20,000 unknown categories) must not make as
// many series.
var LabelCaps = []LabelCap{{"cell", 50}, {"scope", 30}, {"category", 100}} //nolint:gochecknoglobals // constant table

// LabelCap is one label's cap.
type LabelCap struct {
	Label string
	Max   int
}

// foldedLabels are the label names of each family whose values come from the database.
var foldedLabels = map[*prometheus.Desc][]string{ //nolint:gochecknoglobals // constant table
	descRows: labelsCategory, descStuck: labelsScope, descAtCap: labelsScope,
	descKilled: labelsScope, descKilledRows: labelsScope,
}

// foldLabels keeps, for each capped label, the values with the most rows (then the most
// shards, then by name), at most the cap, and sums the samples of the
// others under OtherValue; it adds one outboxctl_label_values_folded sample per capped
// label (how many values were folded, 0 when none) with the table labels given.
func foldLabels(samples []sample, table []string) []sample {
	for _, lc := range LabelCaps {
		rows, shards := map[string]float64{}, map[string]float64{}
		for _, s := range samples {
			if i := labelIndex(s.desc, lc.Label); i >= 0 {
				v := s.labels[i]
				shards[v] += 0
				if s.desc == descRows || s.desc == descKilledRows {
					rows[v] += s.value
				} else {
					shards[v] += s.value
				}
			}
		}
		folded := 0
		if len(shards) > lc.Max {
			values := make([]string, 0, len(shards))
			for v := range shards {
				values = append(values, v)
			}
			slices.SortFunc(values, func(a, b string) int {
				return cmp.Or(cmp.Compare(rows[b], rows[a]), cmp.Compare(shards[b], shards[a]), strings.Compare(a, b))
			})
			keep := map[string]bool{}
			for _, v := range values[:lc.Max] {
				keep[v] = true
			}
			folded = len(values) - lc.Max
			samples = rewrite(samples, lc.Label, keep)
		}
		samples = append(samples, sample{descFolded, float64(folded), append(slices.Clone(table), lc.Label)})
	}
	return samples
}

func labelIndex(d *prometheus.Desc, label string) int {
	return slices.Index(foldedLabels[d], label)
}

// rewrite puts OtherValue in label where its value is not kept and sums the samples that
// then share a family and labels (in the order they first appear).
func rewrite(samples []sample, label string, keep map[string]bool) []sample {
	out := make([]sample, 0, len(samples))
	at := map[string]int{}
	for _, s := range samples {
		i := labelIndex(s.desc, label)
		if i < 0 || keep[s.labels[i]] {
			out = append(out, s)
			continue
		}
		labels := slices.Clone(s.labels)
		labels[i] = OtherValue
		key := s.desc.String() + "\x00" + strings.Join(labels, "\x00")
		if j, ok := at[key]; ok {
			out[j].value += s.value
			continue
		}
		at[key] = len(out)
		out = append(out, sample{s.desc, s.value, labels})
	}
	return out
}
