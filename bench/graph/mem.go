package main

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// started is when the program's variables were set, just before main: the
// nearest to the process's start that the program itself sees.
var started = time.Now()

func processStart() time.Time { return started }

// rssPeakMiB is the process's peak resident memory (Linux's VmHWM), 0
// where there is none to read.
func rssPeakMiB() float64 { return statusMiB("/proc/self/status", "VmHWM:") }

// statusMiB reads a memory figure of a /proc/<pid>/status file, in MiB.
func statusMiB(file, key string) float64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// procCPU is the user and system CPU time of process pid so far, from
// /proc/<pid>/stat (in clock ticks, a hundredth of a second here), or 0.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// the fields after the command, which is in parentheses
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100) // USER_HZ
}

// resetPeak starts the peak resident memory again from the present one
// (Linux 4.0's clear_refs), so that each phase's peak is its own.
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
