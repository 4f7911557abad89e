//go:build !linux

package main

import (
	"io"
	"os"

	"go.uber.org/zap"
)

func prepareStdio(stdin *os.File, _ *zap.Logger) (io.Reader, io.Writer, func()) {
	return stdin, os.Stdout, func() {}
}
