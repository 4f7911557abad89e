package bridge

import (
	"os"
	"testing"
)

func TestDescends(t *testing.T) {
	for _, c := range []struct {
		name          string
		pid, ancestor int
		want          bool
	}{
		{"a process descends from itself", os.Getpid(), os.Getpid(), true},
		{"this process descends from init", os.Getpid(), 1, true},
		{"the parent does not descend from its child", os.Getppid(), os.Getpid(), false},
		{"init descends from no one else", 1, os.Getpid(), false},
		{"a process that does not exist descends from no one", 1 << 30, os.Getpid(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := descends(c.pid, c.ancestor); got != c.want {
				t.Fatalf("descends(%d, %d) = %v", c.pid, c.ancestor, got)
			}
		})
	}
}
