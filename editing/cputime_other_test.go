//go:build !unix

package editing

// cpuTime is not measured here.
func cpuTime() (int64, bool) { return 0, false }
