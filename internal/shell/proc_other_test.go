//go:build unix && !linux

package shell

import (
	"os/exec"
	"strconv"
	"strings"
)

// groupMembers lists the live processes (zombies are not) of process group
// pgid by the name of their program, from ps.
func groupMembers(pgid int) []string {
	out, _ := exec.Command("ps", "-A", "-o", "pgid=,stat=,comm=").Output()
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(f[1], "Z") {
			continue
		}
		if g, err := strconv.Atoi(f[0]); err == nil && g == pgid {
			names = append(names, f[len(f)-1][strings.LastIndex(f[len(f)-1], "/")+1:])
		}
	}
	return names
}
