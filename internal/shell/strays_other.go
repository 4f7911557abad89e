//go:build !linux

package shell

// strayDescendants finds nothing where there is no /proc to read: the
// process group (a job object on Windows) is what is signalled.
func strayDescendants(pid, pgid int) []int { return nil }

func signalAll(pids []int, kill bool) {}
