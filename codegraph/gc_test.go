package codegraph

import (
	"runtime/debug"
	"testing"
)

func TestBoostedPercent(t *testing.T) {
	cases := []struct {
		name string
		prev int
		live uint64
		want int
	}{
		{"raises a small heap's percent to the build's", 100, 16 << 20, buildGCPercent},
		{"raises it before the first collection has measured the heap", 100, 0, buildGCPercent},
		{"lets a larger heap grow by the headroom only", 100, buildGCHeadroom, 200},
		{"keeps the process's own percent for a heap beyond the headroom", 100, 64 << 30, 100},
		{"keeps a percent the process set higher", 800, 16 << 20, 800},
		{"raises a lower one from where it was", 50, buildGCHeadroom / 2, 250},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := boostedPercent(c.prev, c.live); got != c.want {
				t.Fatalf("boostedPercent(%d, %d) = %d, want %d", c.prev, c.live, got, c.want)
			}
		})
	}
}

func TestBoostGCRestoresAfterTheLastBuild(t *testing.T) {
	own := debug.SetGCPercent(137)
	defer debug.SetGCPercent(own)
	first := boostGC()
	if p := int(readMetric("/gc/gogc:percent")); p <= 137 {
		t.Fatalf("percent %d during a build, want it raised above 137", p)
	}
	second := boostGC()
	first()
	first() // a second call does nothing
	if p := int(readMetric("/gc/gogc:percent")); p <= 137 {
		t.Fatalf("percent %d while a second build runs, want it still raised", p)
	}
	second()
	if p := int(readMetric("/gc/gogc:percent")); p != 137 {
		t.Fatalf("percent %d after the builds, want the process's own 137", p)
	}
}

func TestBoostGCLeavesACollectorThatIsOff(t *testing.T) {
	own := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(own)
	end := boostGC()
	adjustGC()
	if p := int(readMetric("/gc/gogc:percent")); p != -1 {
		t.Fatalf("percent %d during a build, want the collector left off", p)
	}
	end()
	if p := int(readMetric("/gc/gogc:percent")); p != -1 {
		t.Fatalf("percent %d after a build, want the collector left off", p)
	}
}
