//go:build !unix

package rpc

import (
	"errors"
	"io"
	"syscall"
	"time"
)

var (
	errWouldBlock  = errors.New("would block")
	errInterrupted = errors.New("interrupted")
)

// nonBlocking: writers are written with their own Write here.
func nonBlocking(io.Writer) (syscall.RawConn, func(time.Time) error) { return nil, nil }

func sysWrite(uintptr, []byte) (int, error) { return 0, errors.ErrUnsupported }
