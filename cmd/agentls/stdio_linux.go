package main

import (
	"io"
	"os"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// pipeSize is what stdin and stdout pipes are grown to: a 1 MiB message then
// crosses in one read instead of sixteen. 1 MiB is the unprivileged limit.
const pipeSize = 1 << 20

// prepareStdio readies stdin and stdout for the protocol. When they are
// pipes (as editors spawn language servers), they are grown, and stdin is
// put in non-blocking mode and registered with Go's poller so that closing
// it at exit ends a read in progress (no goroutine is left blocked in a
// system call).
func prepareStdio(stdin *os.File, log *zap.Logger) (io.Reader, io.Writer) {
	in := io.Reader(stdin)
	if isPipe(stdin) {
		_, _ = unix.FcntlInt(stdin.Fd(), unix.F_SETPIPE_SZ, pipeSize)
		if err := unix.SetNonblock(int(stdin.Fd()), true); err == nil {
			in = os.NewFile(stdin.Fd(), "stdin")
		} else {
			log.Debug("stdin stays blocking", zap.Error(err))
		}
	}
	if isPipe(os.Stdout) {
		_, _ = unix.FcntlInt(os.Stdout.Fd(), unix.F_SETPIPE_SZ, pipeSize)
	}
	return in, os.Stdout
}

func isPipe(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeNamedPipe != 0
}
