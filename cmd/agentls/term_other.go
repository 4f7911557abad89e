//go:build !linux

package main

import "os"

// fileIsTerminal is conservative where termios is not wired: a character
// device is taken for a terminal.
func fileIsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
