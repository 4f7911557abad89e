package codegraph

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A full build allocates six to seven times the graph it keeps (the Go
// parser's syntax trees, dropped file by file), and the collector, run at
// the process's own pace (GOGC, 100 by default), marks the growing graph
// again after every few megabytes. While a build parses, the collector's
// percent is raised so that it runs less often: up to buildGCPercent, and
// never so far that the heap may grow more than buildGCHeadroom bytes
// beyond what the process's own percent allows, so the raise shrinks as
// the graph grows and a large graph costs at most that much more memory.
// On the Go standard library (docs/BENCHMARKS.md) it takes a tenth off
// the build's CPU time; a headroom of 64 MiB does as well as 128 or 256
// for 50 to 100 MiB less at the peak, and 32 gives back part of the gain.
// The percent is restored when the last build running in the process
// ends; a process whose collector is off (GOGC=off) is left alone.
const (
	buildGCPercent  = 400
	buildGCHeadroom = 64 << 20
)

// gcBoost is the process's raised percent, shared by the builds running
// at once: the first raises it, the last restores it.
var gcBoost struct {
	mu     sync.Mutex
	builds int
	prev   int // the process's own percent, while builds > 0
}

// boostGC raises the collector's percent for a build, sized to the heap
// as it is now; call it again as the build goes on to size it to the
// heap then, and call the returned function, once, when the build ends.
func boostGC() (end func()) {
	gcBoost.mu.Lock()
	defer gcBoost.mu.Unlock()
	if gcBoost.builds == 0 {
		gcBoost.prev = int(readMetric("/gc/gogc:percent"))
	}
	gcBoost.builds++
	adjustGCLocked()
	return sync.OnceFunc(func() {
		gcBoost.mu.Lock()
		defer gcBoost.mu.Unlock()
		gcBoost.builds--
		if gcBoost.builds == 0 && gcBoost.prev >= 0 {
			debug.SetGCPercent(gcBoost.prev)
		}
	})
}

// adjustGC sizes the raised percent to the live heap as it is now.
func adjustGC() {
	gcBoost.mu.Lock()
	defer gcBoost.mu.Unlock()
	adjustGCLocked()
}

func adjustGCLocked() {
	prev := gcBoost.prev
	if gcBoost.builds == 0 || prev < 0 {
		return
	}
	debug.SetGCPercent(boostedPercent(prev, readMetric("/gc/heap/live:bytes")))
}

// boostedPercent is the percent that lets a heap of live bytes grow by at
// most buildGCHeadroom more than the percent prev would, within
// [prev, buildGCPercent].
func boostedPercent(prev int, live uint64) int {
	if prev >= buildGCPercent {
		return prev
	}
	extra := buildGCPercent - prev
	if live > 0 {
		extra = int(min(uint64(extra), uint64(buildGCHeadroom)*100/live))
	}
	return prev + extra
}

// readMetric reads one of the runtime's uint64 metrics (0 if it has none
// of that name).
func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
