package bridge

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// checkPeer refuses a connection whose process is not the user's or does
// not descend from this process (SO_PEERCRED, then the parents in /proc).
func checkPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("the peer's credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the peer runs as uid %d, not as this sidecar's user", cred.Uid)
	}
	if !descends(int(cred.Pid), os.Getpid()) {
		return fmt.Errorf("process %d is not a descendant of this sidecar: the bridge serves only the agents it runs", cred.Pid)
	}
	return nil
}

// descends reports whether pid is ancestor or one of its descendants.
func descends(pid, ancestor int) bool {
	for range 64 {
		if pid == ancestor {
			return true
		}
		if pid <= 1 {
			return false
		}
		ppid, err := parent(pid)
		if err != nil {
			return false
		}
		pid = ppid
	}
	return false
}

// parent reads a process's parent from /proc/PID/stat (the field after the
// state, which follows the command name in parentheses).
func parent(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("unreadable stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, errors.New("unreadable stat")
	}
	return strconv.Atoi(f[1])
}
