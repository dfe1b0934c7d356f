//go:build unix

// Package cputime reads the CPU time the process has used, so that a
// benchmark on a shared machine can report work per CPU second beside
// work per wall-clock second (other processes' load disturbs the first
// much less).
package cputime

import "syscall"

// Seconds returns the user and system CPU time of the process so far; 0
// where it cannot be read.
func Seconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
