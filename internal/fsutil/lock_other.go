//go:build !unix

package fsutil

import "os"

// Elsewhere O_APPEND's single write is the only guard.
func lock(*os.File) error { return nil }
func unlock(*os.File)     {}
