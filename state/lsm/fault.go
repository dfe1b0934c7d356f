package lsm

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
)

// Storage faults.
//
// Whatever goes wrong under the store (a full disk, a failed write or
// sync, a corrupt file) becomes an error that names the state directory,
// the file where Pebble says, and what to do; the backend is failed from
// then on: every later call returns that error at once and nothing more is
// written, so a job fails and resumes, when run again, from its last
// checkpoint. Pebble reports faults in four ways, and each is caught:
//
//   - as errors returned by its calls;
//   - through its EventListener (BackgroundError: a failed flush or
//     compaction; DataCorruption: a checksum that did not match), from its
//     own goroutines;
//   - through Logger.Fatalf, where Pebble gives up (a commit whose log
//     write failed, a MANIFEST that cannot be written). Pebble's default
//     logger exits the process; this one records the fault and returns.
//     Pebble goes on after Fatalf returns, and a commit that failed that
//     way returns no error, so Commit checks for a fault after Pebble's;
//   - by panicking, over a write that failed while its write-ahead log is
//     being switched. Commit recovers such a panic (only one whose value is
//     a storage error; any other is a bug and goes on), and the database
//     is then abandoned, not closed: Pebble's commit pipeline is left
//     locked. But the panic of a commit that switches logs unwinds through
//     a deferred unlock of a mutex Pebble had released, which ends the
//     process beyond any recover (a large checkpoint, written as a batch
//     of its own, always switches logs). So writes are kept from failing
//     there: Commit refuses a checkpoint the disk has no room for (minFree),
//     and at the first ENOSPC the reserve (ReserveFile) is freed and the
//     write retried.

// faults holds the first storage fault of a backend, and whether the disk
// filled up. It is set from Pebble's goroutines and read by every call, so
// it takes no lock.
type faults struct {
	dir  string
	err  atomic.Pointer[error]
	full atomic.Bool
}

// record keeps err (explained) as the backend's fault, unless it has one.
func (f *faults) record(err error) {
	err = f.explain(err)
	f.err.CompareAndSwap(nil, &err)
}

// get returns the fault, if any.
func (f *faults) get() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	if f.full.Load() {
		return &Error{Dir: f.dir, Err: syscall.ENOSPC, what: "no space left on device (the disk filled up under the store)", todo: todoSpace}
	}
	return nil
}

// Error is a storage fault of a state directory: what went wrong, where,
// and what to do.
type Error struct {
	Dir  string // the state directory
	File string // the file at fault, if known
	Err  error  // the cause

	what, todo string
}

func (e *Error) Error() string {
	return fmt.Sprintf("state directory %s: %s: %s", e.Dir, e.what, e.todo)
}

func (e *Error) Unwrap() error { return e.Err }

const (
	todoSpace   = "free space on its disk and run the job again; it resumes from its last checkpoint"
	todoAccess  = "make the directory and its files writable by this process, then run the job again"
	todoDisk    = "check the disk (the system log may say more), then run the job again; it resumes from its last checkpoint"
	todoRestore = "the state it holds cannot be recovered: restore the directory from a backup, or remove it (rm -r %s) and run the job again to start from scratch"
)

// explain turns an error of Pebble's (or of the filesystem) into an Error
// that says what to do.
func (f *faults) explain(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	file := ""
	var pe *fs.PathError
	if errors.As(err, &pe) {
		file = pe.Path
	}
	switch {
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		what := "no space left on device"
		if pe != nil {
			what += fmt.Sprintf(" (%s %s)", pe.Op, pe.Path)
		}
		return &Error{Dir: f.dir, File: file, Err: err, what: what, todo: todoSpace}
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		return &Error{Dir: f.dir, File: file, Err: err, what: err.Error(), todo: todoAccess}
	case pebble.IsCorruptionError(err) || pebble.ExtractDataCorruptionInfo(err) != nil:
		detail := err
		if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
			file, detail = info.Path, info.Details
		}
		what := "a file of the store is corrupt"
		switch {
		case file != "":
			what = fmt.Sprintf("file %s is corrupt", file)
		case strings.Contains(err.Error(), "WAL"), strings.Contains(err.Error(), "wal"):
			what = "its write-ahead log (a *.log file) is damaged"
		}
		return &Error{Dir: f.dir, File: file, Err: err, what: fmt.Sprintf("%s (%v)", what, detail), todo: fmt.Sprintf(todoRestore, f.dir)}
	default:
		return &Error{Dir: f.dir, File: file, Err: err, what: err.Error(), todo: todoDisk}
	}
}

// storageError reports whether err, the value of a panic of Pebble's, is a
// failure of the storage (which Commit turns into an error) rather than a
// bug.
func storageError(err error) bool {
	var pe *fs.PathError
	var errno syscall.Errno
	return errors.As(err, &pe) || errors.As(err, &errno) || pebble.IsCorruptionError(err)
}

// logger is the backend's Pebble logger: informational messages are
// dropped, and Fatalf records a fault instead of ending the process.
type logger struct{ f *faults }

func (logger) Infof(string, ...any)  {}
func (logger) Errorf(string, ...any) {}

func (l logger) Fatalf(format string, args ...any) {
	var cause error
	for _, a := range args {
		if err, ok := a.(error); ok {
			cause = err
			break
		}
	}
	l.f.record(&fatalError{msg: fmt.Sprintf(format, args...), cause: cause})
}

// fatalError is what Pebble gave up on, with the error it named.
type fatalError struct {
	msg   string
	cause error
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.cause }

// listener returns the Pebble events that are faults.
func (f *faults) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: f.record,
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			f.record(&Error{Dir: f.dir, File: info.Path, Err: info.Details,
				what: fmt.Sprintf("file %s is corrupt (%v)", info.Path, info.Details), todo: fmt.Sprintf(todoRestore, f.dir)})
		},
	}
}

// size formats a number of bytes for a message.
func size(n uint64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
