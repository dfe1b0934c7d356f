package trim

import (
	"sync"
	"time"
)

// settle is how long after the last Soon the trim comes: a job's first
// moments (its first batches, its first checkpoint) run code once too.
const settle = 3 * time.Second

var (
	mu    sync.Mutex
	timer *time.Timer
)

// Soon trims once things have settled: settle after the last call, so
// that starting many jobs in a row trims once. Call it after start-up
// work that is over (a job started).
func Soon() {
	mu.Lock()
	defer mu.Unlock()
	if timer == nil {
		timer = time.AfterFunc(settle, Startup)
		return
	}
	timer.Reset(settle)
}
