//go:build unix

package editing

import "syscall"

// cpuTime is the CPU time (user and system) the process has used, in
// nanoseconds: on a shared machine a steadier measure than wall time.
func cpuTime() (int64, bool) {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0, false
	}
	return r.Utime.Nano() + r.Stime.Nano(), true
}
