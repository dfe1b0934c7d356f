//go:build !unix

package join

// cpuSeconds is not measured here: benchmarks report no CPU figure.
func cpuSeconds() float64 { return 0 }
