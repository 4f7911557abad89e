package shell

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// groupMembers lists the live processes (zombies are not) of process group
// pgid by the name of their program, from /proc.
func groupMembers(pgid int) []string {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var names []string
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
		if open < 0 || end < open {
			continue
		}
		fields := bytes.Fields(data[end+1:])
		if len(fields) < 3 || string(fields[0]) == "Z" {
			continue
		}
		if g, err := strconv.Atoi(string(fields[2])); err == nil && g == pgid {
			names = append(names, string(data[open+1:end]))
		}
	}
	return names
}
