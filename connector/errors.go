package connector

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// DeadLetterPathOption is Sluice's own table option naming a file that
// receives every malformed record, untouched, one per line.
const DeadLetterPathOption = "dead-letter.path"

// ErrorPolicyOptions returns the connector-level option keys the error
// policy reads, for a factory's CheckKnown list. The format-level key
// '<format>.ignore-parse-errors' is checked by the format.
func ErrorPolicyOptions() []string { return []string{DeadLetterPathOption} }

// ErrorPolicy decides what a reader does with a record its format cannot
// decode. It is built once per source table and shared by the table's
// readers; it is safe for concurrent use.
//
//   - By default (FAIL) the read fails with an error naming the table, the
//     record's location and the reason.
//   - With '<format>.ignore-parse-errors' = 'true' the record is skipped and
//     counted.
//   - With 'dead-letter.path' set the record is appended, untouched and
//     followed by a newline, to that file. Unless ignore-parse-errors is
//     explicitly 'false', a dead-letter file implies skipping; with an
//     explicit 'false' the record is written and then the read fails.
type ErrorPolicy struct {
	table  string
	skip   bool
	dlPath string

	skipped atomic.Int64

	mu      sync.Mutex
	readers int // open readers of the table (ReaderOpened, ReaderClosed)
	dlFile  *os.File
	dlBuf   *bufio.Writer
	dlErr   error
}

// NewErrorPolicy builds the error policy of table t whose records are in
// the format named format ("" if the connector has no format).
func NewErrorPolicy(t Table, format string) (*ErrorPolicy, error) {
	p := &ErrorPolicy{table: t.Name, dlPath: t.Options[DeadLetterPathOption]}
	if _, ok := t.Options[DeadLetterPathOption]; ok && p.dlPath == "" {
		return nil, fmt.Errorf("option '%s' must not be empty", DeadLetterPathOption)
	}
	def := p.dlPath != ""
	if format != "" {
		skip, err := t.Options.Bool(format+".ignore-parse-errors", def)
		if err != nil {
			return nil, err
		}
		p.skip = skip
	} else {
		p.skip = def
	}
	return p, nil
}

// Skips reports whether malformed records are skipped rather than failing
// the read.
func (p *ErrorPolicy) Skips() bool { return p.skip }

// Handle applies the policy to a record that failed to decode with err.
// where locates the record for messages, e.g. "bids.jsonl:17" or
// "partition 2 offset 1234". It returns nil when the record is to be
// skipped (it has been counted) and otherwise an error of the form
// "source <table>: <where>: cannot decode record: <err>".
func (p *ErrorPolicy) Handle(where string, record []byte, err error) error {
	if p.dlPath != "" {
		if werr := p.deadLetter(record); werr != nil {
			return fmt.Errorf("source %s: %s: cannot write malformed record to dead-letter file %s: %w (decode error: %v)",
				p.table, where, p.dlPath, werr, err)
		}
	}
	if p.skip {
		p.skipped.Add(1)
		return nil
	}
	return fmt.Errorf("source %s: %s: cannot decode record: %w", p.table, where, err)
}

// Skipped returns the number of records skipped so far by all readers of
// the table; it implements Stats.
func (p *ErrorPolicy) Skipped() int64 { return p.skipped.Load() }

func (p *ErrorPolicy) deadLetter(record []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dlErr != nil {
		return p.dlErr
	}
	if p.dlFile == nil {
		f, err := os.OpenFile(p.dlPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			p.dlErr = fmt.Errorf("cannot open: %w", err)
			return p.dlErr
		}
		p.dlFile = f
		p.dlBuf = bufio.NewWriter(f)
	}
	p.dlBuf.Write(record)
	p.dlBuf.WriteByte('\n')
	// Flush at once: dead letters are rare, and a crash must not lose them.
	if err := p.dlBuf.Flush(); err != nil {
		p.dlErr = fmt.Errorf("cannot append: %w", err)
		return p.dlErr
	}
	return nil
}

// ReaderOpened notes that a reader of the table opened. A source calls it
// for each reader it opens, and ReaderClosed as each closes.
func (p *ErrorPolicy) ReaderOpened() {
	p.mu.Lock()
	p.readers++
	p.mu.Unlock()
}

// ReaderClosed notes that a reader of the table closed: the last one
// open closes the dead-letter file (see Close).
func (p *ErrorPolicy) ReaderClosed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readers--
	if p.readers > 0 {
		return nil
	}
	return p.closeLocked()
}

// Close closes the dead-letter file, if one was opened. A later malformed
// record opens it again (for appending), so a source may call Close when its
// last reader closes.
func (p *ErrorPolicy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closeLocked()
}

func (p *ErrorPolicy) closeLocked() error {
	if p.dlFile == nil {
		return nil
	}
	err := p.dlBuf.Flush()
	if cerr := p.dlFile.Close(); err == nil {
		err = cerr
	}
	p.dlFile, p.dlBuf = nil, nil
	if err != nil {
		return fmt.Errorf("cannot close dead-letter file %s: %w", p.dlPath, err)
	}
	return nil
}
