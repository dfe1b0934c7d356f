//go:build unix

package join

import "syscall"

// cpuSeconds returns the CPU time (user and system) the process has used,
// so that a benchmark on a shared machine can report rows per CPU second
// beside rows per wall-clock second.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
