package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// HeaderMode says whether tables carry a header line.
type HeaderMode int

// The header modes.
const (
	// HeadersAuto (the default): a header line on terminal tables and above tab-separated
	// rows on a pipe (the column names JSON uses), so piped output says what each field is.
	HeadersAuto HeaderMode = iota
	// HeadersOff (--no-headers): no header line on a terminal or a pipe. CSV keeps its
	// header, which is part of the format.
	HeadersOff
)

// columnGap is the blank space tablewriter pads after every column.
const columnGap = 2

// minCell is the narrowest a long column is cut to (plus its header's width).
const minCell = 5

// Shown is the footer of a list cut by a limit: "showing 20 of 466 stuck shards (--limit)",
// or "" when nothing is hidden.
func Shown(shown, total int, noun, flag string) string {
	if shown >= total {
		return ""
	}
	s := fmt.Sprintf("showing %d of %d %s", shown, total, noun)
	if flag != "" {
		s += " (" + flag + ")"
	}
	return s
}

// footers writes what the sections leave out on stderr: never in the data, so JSON, CSV
// and tab-separated consumers are unaffected.
func (p *Printer) footers(doc Doc) {
	for _, s := range doc {
		if s.Footer == "" {
			continue
		}
		// Escaped whole, a fan-out's footer printed its separators as a literal \n.
		for _, line := range strings.Split(s.Footer, "\n") {
			p.notef("%s", line)
		}
	}
}

// fitted is a table cut to a width: the columns kept (indexes into the human columns),
// each one's width, the names of the columns dropped and whether any cell was cut.
type fitted struct {
	keep    []int
	width   []int
	dropped []string
	cut     bool
}

// fitTable decides what of a table fits in width columns: the lowest-priority columns go
// first (rightmost first among equals; columns without a priority are never dropped), then
// the widest columns are cut down to their header's width, then (still too wide) headers
// too, never below minCell. width <= 0 fits everything.
func fitTable(names, header []string, cells [][]string, prio map[string]int, width int) fitted {
	n := len(header)
	natural := make([]int, n)
	for i := range header {
		natural[i] = ansi.StringWidth(header[i])
		for _, r := range cells {
			natural[i] = max(natural[i], ansi.StringWidth(r[i]))
		}
	}
	f := fitted{}
	for i := range n {
		f.keep = append(f.keep, i)
		f.width = append(f.width, natural[i])
	}
	if width <= 0 {
		return f
	}
	total := func() int {
		t := 0
		for _, w := range f.width {
			t += w + columnGap
		}
		return t
	}
	var gone []int
	for total() > width {
		j := lowestPriority(f.keep, names, prio)
		if j < 0 {
			break
		}
		f.dropped = append(f.dropped, names[f.keep[j]])
		gone = append(gone, f.keep[j])
		f.keep = append(f.keep[:j], f.keep[j+1:]...)
		f.width = append(f.width[:j], f.width[j+1:]...)
	}
	f.restore(gone, names, natural, width)
	// Values are cut down to their header first; headers themselves only as a last resort.
	for _, headers := range []bool{false, true} {
		for excess := total() - width; excess > 0; excess-- {
			j := widestCuttable(f, header, headers)
			if j < 0 {
				break
			}
			f.width[j]--
			f.cut = true
		}
	}
	return f
}

// restore brings back, highest priority first, the dropped columns that fit after all: a
// wide column dropped later can leave room for a narrow one dropped before it.
func (f *fitted) restore(gone []int, names []string, natural []int, width int) {
	used := 0
	for _, w := range f.width {
		used += w + columnGap
	}
	for k := len(gone) - 1; k >= 0; k-- {
		i := gone[k]
		if used+natural[i]+columnGap > width {
			continue
		}
		used += natural[i] + columnGap
		at := 0
		for at < len(f.keep) && f.keep[at] < i {
			at++
		}
		f.keep = slices.Insert(f.keep, at, i)
		f.width = slices.Insert(f.width, at, natural[i])
		f.dropped = slices.DeleteFunc(f.dropped, func(n string) bool { return n == names[i] })
	}
}

// lowestPriority is the position in keep of the column to drop next, or -1.
func lowestPriority(keep []int, names []string, prio map[string]int) int {
	best := -1
	for j, i := range keep {
		p, ok := prio[names[i]]
		if !ok {
			continue
		}
		if best < 0 || p <= prio[names[keep[best]]] {
			best = j
		}
	}
	return best
}

// widestCuttable is the position of the widest column that can still lose a column of
// width (down to its header's width, or to minCell when headers may be cut), or -1.
func widestCuttable(f fitted, header []string, headers bool) int {
	best := -1
	for j, i := range f.keep {
		floor := minCell
		if !headers {
			floor = max(ansi.StringWidth(header[i]), minCell)
		}
		if f.width[j] <= floor {
			continue
		}
		if best < 0 || f.width[j] >= f.width[best] {
			best = j
		}
	}
	return best
}

// cutCell shortens a rendered cell (colour included) to w display columns, marking the cut
// with "…".
func cutCell(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// hiddenNote says which columns a narrow terminal hid, so nothing is dropped silently. It
// fits the terminal itself: the flag that shows them comes first, the list is cut with "…".
func hiddenNote(dropped []string, width int) string {
	if len(dropped) == 0 {
		return ""
	}
	note := fmt.Sprintf("-o wide shows %d hidden column(s): %s", len(dropped), strings.Join(dropped, ", "))
	if width > 0 {
		note = cutCell(note, width)
	}
	return note
}
