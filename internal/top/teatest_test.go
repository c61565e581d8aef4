package top

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/outboxctl/outboxctl/internal/render"
)

// TestGoldenFrames runs top as a bubbletea program (teatest) on the incident from memory at
// 80, 120 and 200 columns, drills into the poison finding, and compares the frame with its
// golden file (testdata/TestGoldenFrames/*.golden; go test -run TestGoldenFrames -update
// rewrites them: review the diff). The colour profile is pinned to ASCII, so a terminal's
// colours never change a frame; the clock is pinned, so the ages do not either.
func TestGoldenFrames(t *testing.T) {
	render.PinASCII()
	for _, size := range [][2]int{{80, 24}, {120, 30}, {200, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			src := &memSource{snaps: []Snapshot{incident()}}
			m := New(context.Background(), src, Options{Interval: time.Hour, Now: func() time.Time { return now }})
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(size[0], size[1]))
			m.send = tm.Send
			waitFor := func(s string) {
				teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) }, teatest.WithDuration(30*time.Second))
			}
			waitFor("finding(s) of")
			tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
			waitFor("its shards")
			tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
			final := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*Model)
			golden.RequireEqual(t, []byte(final.View()))
		})
	}
}
