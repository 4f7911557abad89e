package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// config is what one run measures; the flags fill it.
type config struct {
	rounds       int
	warmup       int           // agent/ping sent before the timed figures
	pings        int           // sequential agent/ping per round
	inflight     int           // agent/ping answered per round in the pipelined figure
	window       int           // requests kept outstanding in the pipelined figure
	payloads     int           // 1 MiB round trips per round
	payloadSize  int           // bytes of the payload string
	spawns       int           // spawns per round for spawn-to-initialize
	figureLimit  time.Duration // a figure that takes longer kills the server
	stopLimit    time.Duration // shutdown+exit that takes longer kills the server
	payloadBytes []byte        // payload(payloadSize), made once
}

// sample holds one round's figures for one server; NaN where a figure could
// not be taken (no /proc).
type sample [numFigs]float64

func newSample() sample {
	var s sample
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

// runRound starts the server, takes every figure in a fixed order (memory
// idle, warm-up, sequential pings, pipelined pings, payload round trips,
// memory after), ends it with shutdown and exit, then spawns it again until
// cfg.spawns spawn-to-initialize times are taken.
func runRound(spec serverSpec, cfg *config) (sample, error) {
	s := newSample()
	p, err := start(spec)
	if err != nil {
		return s, err
	}
	defer p.close()
	spawnTimes := make([]float64, 0, cfg.spawns)
	initTime, err := p.initialize(cfg.figureLimit)
	if err != nil {
		return s, err
	}
	spawnTimes = append(spawnTimes, ms(initTime))

	if m, err := readMem(p.pid()); err == nil {
		s[figRSSIdle] = mb(m.rss)
	} else if !errors.Is(err, errNoProcfs) {
		return s, p.fail("memory", err)
	}

	if cfg.warmup > 0 {
		done := p.guard(cfg.figureLimit, "warm-up")
		k := pingCall(pingData)
		for range cfg.warmup {
			if err := echo(p.conn, k, pingData); err != nil {
				done()
				return s, p.fail("warm-up", err)
			}
		}
		done()
	}

	// Each figure: take the server's CPU time around it, guard it.
	measure := func(name string, ops int, cpuFig figID, run func() error) error {
		cpu0, cpuErr := cpuTime(p.pid())
		done := p.guard(cfg.figureLimit, name)
		err := run()
		done()
		if err != nil {
			return p.fail(name, err)
		}
		if cpu1, err := cpuTime(p.pid()); err == nil && cpuErr == nil {
			s[cpuFig] = float64(cpu1-cpu0) / float64(time.Microsecond) / float64(ops)
		}
		return nil
	}
	if err := measure("sequential agent/ping", cfg.pings, figCPUPing, func() error {
		l, err := measurePing(p.conn, cfg.pings)
		s[figPing], s[figPingP50], s[figPingP99] = l.perSec, us(l.p50), us(l.p99)
		return err
	}); err != nil {
		return s, err
	}
	if err := measure("agent/ping in flight", cfg.inflight, figCPUInflight, func() error {
		rate, err := measureInflight(p.conn, cfg.inflight, cfg.window, func() { p.abort("the in-flight figure failed") })
		s[figInflight] = rate
		return err
	}); err != nil {
		return s, err
	}
	if err := measure("payload round trips", cfg.payloads, figCPUPayload, func() error {
		rate, err := measurePayload(p.conn, cfg.payloads, cfg.payloadBytes)
		s[figPayload] = rate
		return err
	}); err != nil {
		return s, err
	}

	if m, err := readMem(p.pid()); err == nil {
		s[figRSSAfter], s[figHWM] = mb(m.rss), mb(m.hwm)
	} else if !errors.Is(err, errNoProcfs) {
		return s, p.fail("memory", err)
	}

	code, err := p.stop(cfg.stopLimit)
	if err != nil {
		return s, err
	}
	if code != 0 {
		return s, fmt.Errorf("%s: exit code %d after shutdown and exit, want 0", spec.Name, code)
	}

	for len(spawnTimes) < cfg.spawns {
		d, err := spawnOnce(spec, cfg)
		if err != nil {
			return s, err
		}
		spawnTimes = append(spawnTimes, d)
	}
	s[figSpawn] = median(spawnTimes)
	return s, nil
}

// spawnOnce starts the server, times initialize, and ends it.
func spawnOnce(spec serverSpec, cfg *config) (float64, error) {
	p, err := start(spec)
	if err != nil {
		return 0, err
	}
	defer p.close()
	d, err := p.initialize(cfg.figureLimit)
	if err != nil {
		return 0, err
	}
	if code, err := p.stop(cfg.stopLimit); err != nil {
		return 0, err
	} else if code != 0 {
		return 0, fmt.Errorf("%s: exit code %d after shutdown and exit, want 0", spec.Name, code)
	}
	return ms(d), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func mb(b int64) float64         { return float64(b) / 1e6 }

// median of the values that are not NaN; NaN when there are none.
func median(v []float64) float64 {
	xs := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
