//go:build race

package window

// raceEnabled makes the random tests smaller under the race detector.
const raceEnabled = true
