//go:build !windows

package codegraph

import "os"

// openShared opens a stored graph for reading. On Unix a file open for
// reading may be replaced (renamed over) and keeps its content.
func openShared(path string) (*os.File, error) { return os.Open(path) }
