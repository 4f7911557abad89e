//go:build unix

package rpc

import (
	"io"
	"syscall"
	"time"
)

var (
	errWouldBlock  error = syscall.EAGAIN
	errInterrupted error = syscall.EINTR
)

// nonBlocking returns w's raw connection and SetWriteDeadline when w is a
// file or socket registered with Go's poller (its descriptor is in
// non-blocking mode), so that it can be written without waiting on the
// peer; nil otherwise.
func nonBlocking(w io.Writer) (syscall.RawConn, func(time.Time) error) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return nil, nil
	}
	dl, ok := w.(interface{ SetWriteDeadline(time.Time) error })
	if !ok || dl.SetWriteDeadline(time.Time{}) != nil {
		return nil, nil // not pollable: a blocking descriptor, a regular file
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, nil
	}
	return rc, dl.SetWriteDeadline
}

func sysWrite(fd uintptr, b []byte) (int, error) { return syscall.Write(int(fd), b) }
