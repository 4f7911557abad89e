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
// pipes (as editors spawn language servers), they are grown. When they are
// pipes or sockets that stderr does not share (the logger writes stderr and
// expects it blocking), each is put in non-blocking mode and registered with
// Go's poller: closing stdin at exit then ends a read in progress (no
// goroutine is left blocked in a system call), and stdout is written without
// ever waiting on the editor's reading (rpc.Stream). restore puts stdout
// back in blocking mode for whoever holds it after agentls.
func prepareStdio(stdin *os.File, log *zap.Logger) (in io.Reader, out io.Writer, restore func()) {
	in, out, restore = stdin, os.Stdout, func() {}
	if isPipe(stdin) {
		_, _ = unix.FcntlInt(stdin.Fd(), unix.F_SETPIPE_SZ, pipeSize)
	}
	if isStream(stdin) && !sameFile(stdin, os.Stderr) {
		if err := unix.SetNonblock(int(stdin.Fd()), true); err == nil {
			in = os.NewFile(stdin.Fd(), "stdin")
		} else {
			log.Debug("stdin stays blocking", zap.Error(err))
		}
	}
	if isPipe(os.Stdout) {
		_, _ = unix.FcntlInt(os.Stdout.Fd(), unix.F_SETPIPE_SZ, pipeSize)
	}
	if isStream(os.Stdout) && !sameFile(os.Stdout, os.Stderr) {
		fd := int(os.Stdout.Fd())
		if err := unix.SetNonblock(fd, true); err == nil {
			out = os.NewFile(uintptr(fd), "stdout")
			restore = func() { _ = unix.SetNonblock(fd, false) }
		} else {
			log.Debug("stdout stays blocking", zap.Error(err))
		}
	}
	return in, out, restore
}

func isPipe(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeNamedPipe != 0
}

// isStream: a pipe or a socket, which Go's poller can wait on.
func isStream(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

// sameFile reports whether a and b are the same pipe or file: stdout and
// stderr redirected together. Making such a stdout non-blocking would make
// stderr non-blocking under the logger, which does not expect it.
func sameFile(a, b *os.File) bool {
	fa, err1 := a.Stat()
	fb, err2 := b.Stat()
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
