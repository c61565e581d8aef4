package top

import (
	"context"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// blockedSource is memSource whose polls after the first wait until release is closed: a
// refresh that never ends while the keys are measured.
type blockedSource struct {
	*memSource
	release chan struct{}
	polled  chan struct{}
	first   bool
}

func (s *blockedSource) Poll(ctx context.Context, f Filter, tier Tier) Snapshot {
	if s.first {
		s.polled <- struct{}{}
		<-s.release
	}
	s.first = true
	return s.memSource.Poll(ctx, f, tier)
}

// BenchmarkKeyDuringRefresh is `make bench`'s measure of "a keypress is never blocked by a
// refresh": each iteration is a key (down, then up) handled and the screen drawn, while a
// poll is in flight and blocked for the whole run (its command runs off the loop, as
// bubbletea runs it). ns/op is the key's latency; it would be the poll's length if the
// loop waited for it.
func BenchmarkKeyDuringRefresh(b *testing.B) {
	src := &blockedSource{memSource: &memSource{snaps: []Snapshot{incident()}}, release: make(chan struct{}), polled: make(chan struct{}, 1)}
	m := New(context.Background(), src, Options{Interval: time.Hour, Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(m.poll(TierFindings)())
	refresh := m.poll(TierShards) // a refresh: its command blocks in Poll
	go refresh()
	<-src.polled
	keys := []tea.KeyMsg{{Type: tea.KeyDown}, {Type: tea.KeyUp}}
	i := 0
	for b.Loop() {
		m.Update(keys[i%2])
		_ = m.View()
		i++
	}
	b.StopTimer()
	close(src.release)
}
