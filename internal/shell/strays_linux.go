package shell

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// strayDescendants lists the processes descending from pid that are not in
// process group pgid: those an agent started in a session or group of
// their own (a pseudo-terminal's shell), which the group's signals miss.
func strayDescendants(pid, pgid int) []int {
	type proc struct{ ppid, pgrp int }
	procs := map[int]proc{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		end := bytes.LastIndexByte(data, ')')
		if end < 0 {
			continue
		}
		id, err := strconv.Atoi(string(bytes.TrimSpace(data[:bytes.IndexByte(data, '(')])))
		if err != nil {
			continue
		}
		f := bytes.Fields(data[end+1:])
		if len(f) < 3 || string(f[0]) == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgrp, _ := strconv.Atoi(string(f[2]))
		procs[id] = proc{ppid, pgrp}
	}
	children := map[int][]int{}
	for id, p := range procs {
		children[p.ppid] = append(children[p.ppid], id)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, c := range children[id] {
			if procs[c].pgrp != pgid {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// signalAll sends SIGTERM (or SIGKILL) to each process, and to the group it
// leads when it leads one.
func signalAll(pids []int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	for _, p := range pids {
		if g, err := syscall.Getpgid(p); err == nil && g == p {
			_ = syscall.Kill(-p, sig)
		}
		_ = syscall.Kill(p, sig)
	}
}
