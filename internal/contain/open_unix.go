//go:build unix

package contain

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without blocking on it, were it a FIFO
// put in place after the caller's stat.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
}

// nonBlock opens without blocking on a FIFO.
const nonBlock = syscall.O_NONBLOCK
