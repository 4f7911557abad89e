//go:build !unix

package contain

import "os"

// openNoBlock opens path for reading; the caller has checked it is a
// regular file.
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }

// nonBlock: there are no FIFOs to block on here.
const nonBlock = 0
