package http

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
	"unicode/utf8"
)

// deadLetters appends JSON lines to a file: what the push source refused
// and what the sink could not deliver, each with the reason. The file is
// opened at the first line (and again after close) for appending; every
// line is written whole in one call, so that lines of two writers never
// mix. Safe for concurrent use.
type deadLetters struct {
	path string

	mu  sync.Mutex
	f   *os.File
	err error // a failure to open or write: every later line fails too
}

// write appends one JSON line built from fields (in order; a []byte
// value is raw JSON).
func (d *deadLetters) write(fields ...field) error {
	line := []byte{'{'}
	for i, f := range fields {
		if i > 0 {
			line = append(line, ',')
		}
		line, _ = appendJSON(line, f.key)
		line = append(line, ':')
		switch v := f.val.(type) {
		case rawJSON:
			line = append(line, v...)
		default:
			var err error
			if line, err = appendJSON(line, v); err != nil {
				return err
			}
		}
	}
	line = append(line, '}', '\n')
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return d.err
	}
	if d.f == nil {
		f, err := os.OpenFile(d.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			d.err = fmt.Errorf("cannot open dead-letter file %s: %w", d.path, err)
			return d.err
		}
		d.f = f
	}
	if _, err := d.f.Write(line); err != nil {
		d.err = fmt.Errorf("cannot append to dead-letter file %s: %w", d.path, err)
		return d.err
	}
	return nil
}

// close closes the file, if open; a later line opens it again.
func (d *deadLetters) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return nil
	}
	err := d.f.Close()
	d.f = nil
	if err != nil {
		return fmt.Errorf("cannot close dead-letter file %s: %w", d.path, err)
	}
	return nil
}

// field is a member of a dead-letter line.
type field struct {
	key string
	val any
}

// rawJSON is a field value that is JSON already (an encoded row).
type rawJSON []byte

func appendJSON(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// bodyField is data as a dead-letter field: "body" with its text when it
// is valid UTF-8, else "body_base64" (a JSON string would replace the
// bytes that are not).
func bodyField(data []byte) field {
	if utf8.Valid(data) {
		return field{"body", string(data)}
	}
	return field{"body_base64", data} // encoding/json writes []byte in base64
}

// timeField is the current time as a dead-letter field.
func timeField(now time.Time) field {
	return field{"time", now.UTC().Format(time.RFC3339Nano)}
}
