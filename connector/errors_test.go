package connector

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestErrorPolicy(t *testing.T) {
	cause := errors.New(`field "price": invalid number "4.x"`)
	dl := filepath.Join(t.TempDir(), "dead.txt")
	for _, tc := range []struct {
		opts    Options
		skip    bool
		written int
	}{
		{Options{}, false, 0},
		{Options{"json.ignore-parse-errors": "true"}, true, 0},
		{Options{"dead-letter.path": dl}, true, 1},
		{Options{"dead-letter.path": dl, "json.ignore-parse-errors": "false"}, false, 1},
	} {
		os.Remove(dl)
		p, err := NewErrorPolicy(Table{Name: "bids", Options: tc.opts}, "json")
		if err != nil {
			t.Fatal(err)
		}
		err = p.Handle("bids.jsonl:17", []byte(`{"price":4.x}`), cause)
		if tc.skip != (err == nil) || p.Skips() != tc.skip {
			t.Errorf("%v: err = %v", tc.opts, err)
		}
		if err != nil {
			if err.Error() != `source bids: bids.jsonl:17: cannot decode record: field "price": invalid number "4.x"` || !errors.Is(err, cause) {
				t.Errorf("%v: err = %v", tc.opts, err)
			}
		} else if p.Skipped() != 1 {
			t.Errorf("%v: skipped = %d", tc.opts, p.Skipped())
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(dl)
		if got := strings.Count(string(data), "{\"price\":4.x}\n"); got != tc.written {
			t.Errorf("%v: dead-letter file holds %q", tc.opts, data)
		}
	}
	if _, err := NewErrorPolicy(Table{Options: Options{"json.ignore-parse-errors": "yes"}}, "json"); err == nil {
		t.Error("a bad boolean must be rejected")
	}
}

func TestErrorPolicyConcurrentDeadLetters(t *testing.T) {
	dl := filepath.Join(t.TempDir(), "dead.txt")
	p, err := NewErrorPolicy(Table{Name: "t", Options: Options{"dead-letter.path": dl}}, "csv")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				if err := p.Handle("x", []byte("bad,record"), errors.New("bad")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	p.Close()
	data, _ := os.ReadFile(dl)
	if strings.Count(string(data), "bad,record\n") != 400 || p.Skipped() != 400 {
		t.Fatalf("%d lines, %d skipped", strings.Count(string(data), "\n"), p.Skipped())
	}
}

// TestErrorPolicyReaders keeps the dead-letter file open while a reader
// of the table is: the last reader to close closes it, and a record after
// that opens it again, appending.
func TestErrorPolicyReaders(t *testing.T) {
	dl := filepath.Join(t.TempDir(), "dead.txt")
	p, err := NewErrorPolicy(Table{Name: "t", Options: Options{"dead-letter.path": dl}}, "json")
	if err != nil {
		t.Fatal(err)
	}
	open := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.dlFile != nil
	}
	p.ReaderOpened()
	p.ReaderOpened()
	if err := p.Handle("a", []byte("one"), errors.New("bad")); err != nil {
		t.Fatal(err)
	}
	if err := p.ReaderClosed(); err != nil || !open() {
		t.Fatalf("one of two readers closed: %v, file open %v", err, open())
	}
	if err := p.ReaderClosed(); err != nil || open() {
		t.Fatalf("the last reader closed: %v, file open %v", err, open())
	}
	p.ReaderOpened()
	if err := p.Handle("b", []byte("two"), errors.New("bad")); err != nil {
		t.Fatal(err)
	}
	if err := p.ReaderClosed(); err != nil || open() {
		t.Fatalf("the reader of a second run closed: %v, file open %v", err, open())
	}
	if b, _ := os.ReadFile(dl); string(b) != "one\ntwo\n" {
		t.Errorf("dead letters %q", b)
	}
}
