package main

import (
	"fmt"
	"io"
	"os"
	"strings"

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

// trimStartupPages drops, from this process's page tables, the pages of its
// own executable that start-up touched: the package initialisers of every
// dependency (the provider SDKs' among them) run once and never again, yet
// their code and read-only data would stay counted in the sidecar's
// resident memory for the life of the editor. The pages are clean and
// file-backed, so nothing is lost: they stay in the page cache, and any
// page needed later faults back in at once.
func trimStartupPages(log *zap.Logger) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	var trimmed uintptr
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[5] != exe || strings.Contains(f[1], "w") {
			continue
		}
		var start, end uintptr
		if _, err := fmt.Sscanf(f[0], "%x-%x", &start, &end); err != nil || end <= start {
			continue
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_DONTNEED); errno == 0 {
			trimmed += end - start
		}
	}
	log.Debug("start-up pages trimmed", zap.Uint64("bytes", uint64(trimmed)))
}
