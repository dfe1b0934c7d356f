//go:build !linux

package trim

// Startup does nothing outside Linux.
func Startup() {}
