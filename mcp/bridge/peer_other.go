//go:build !linux

package bridge

import "net"

// checkPeer accepts every connection where the peer's process cannot be
// read: the socket's directory (0700) and the token guard it.
func checkPeer(net.Conn) error { return nil }
