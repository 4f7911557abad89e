package heat

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
)

type discard struct{ n int }

func (d *discard) HeatUpdate(_ context.Context, p *api.HeatUpdateParams) error {
	d.n += len(p.Updates)
	return nil
}

// BenchmarkTick measures one tick with 50 files changed among 1k, 10k and
// 100k tracked (all in context, the steady state of a long session): the
// cost must follow the 50, not the tracked count.
func BenchmarkTick(b *testing.B) {
	for _, tracked := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("tracked=%d/changed=50", tracked), func(b *testing.B) {
			clock := newFakeClock()
			m := New(&discard{}, Options{Clock: clock})
			tr := m.Tracker("task", "1")
			paths := make([]string, tracked)
			for i := range paths {
				paths[i] = fmt.Sprintf("pkg%03d/file%06d.go", i%1000, i)
				tr.Access(paths[i], api.ActionRead)
			}
			ctx := context.Background()
			m.Tick(ctx, clock.Advance(100*time.Millisecond))
			next := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				for range 50 {
					tr.Access(paths[next%tracked], api.ActionWrite)
					next += 7919 // a prime stride spreads the changes
				}
				now := clock.Advance(100 * time.Millisecond)
				b.StartTimer()
				m.Tick(ctx, now)
			}
		})
	}
}
