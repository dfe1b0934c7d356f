// Package logtest keeps what a connector logs (its connector.Env.Logf)
// for a test to read. Unlike internal/enginetest it imports nothing of
// sluice, so that a connector's own (internal) tests can use it.
package logtest

import (
	"fmt"
	"strings"
	"sync"
)

// Lines is a log that keeps its lines; it is safe for concurrent use.
type Lines struct {
	mu    sync.Mutex
	lines []string
}

// Logf adds a line: it is a connector.Env.Logf.
func (l *Lines) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// String returns the lines so far, joined by newlines.
func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
