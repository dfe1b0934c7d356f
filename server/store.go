package server

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// store is the server's data directory:
//
//	catalog.sql               the catalog statements accepted, in order
//	audit.jsonl               who changed the catalog, when and how (audit.go)
//	tokens.json               the API tokens' SHA-256 hashes (auth.go)
//	jobs/NAME/job.json        a job's record (jobRecord)
//	jobs/NAME/versions/N.sql  the SQL of its version N (the last few kept)
//	state/                    the jobs' 'state.dir'
//	trash/                    jobs being deleted
//
// Every file is written whole and atomically (a temporary file, synced,
// renamed over the old one, the directory synced): a crash leaves the
// old content or the new, never a mix. The audit log is the exception:
// it is appended to, and a line a crash cut short is dropped.
type store struct {
	dir string
	// keep is how many versions of a job are kept.
	keep int
}

// Job statuses. A record's status is what the job should be after a
// restart: a running job runs again; the others stay as they are.
const (
	statusRunning  = "running"
	statusStopped  = "stopped"
	statusFailed   = "failed"
	statusFinished = "finished"
)

// jobRecord is a job's job.json.
type jobRecord struct {
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	Status    string            `json:"status"`
	Version   int               `json:"version"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
	StartedAt time.Time         `json:"started_at,omitzero"`
	StoppedAt time.Time         `json:"stopped_at,omitzero"`
	// Errors are the job's last errors, oldest first.
	Errors []jobError `json:"errors,omitempty"`
	// AllowLossOnce: the version was accepted with allow_state_loss and
	// has not started yet; its start may drop state.
	AllowLossOnce bool `json:"allow_state_loss_once,omitempty"`
}

// jobError is an error of a job, with when it happened.
type jobError struct {
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
}

// maxErrors is how many errors a job keeps.
const maxErrors = 10

func openStore(dir string, keep int) (*store, error) {
	if dir == "" {
		return nil, errors.New("server: no data directory")
	}
	for _, d := range []string{dir, filepath.Join(dir, "jobs"), filepath.Join(dir, "state")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("server: cannot create the data directory: %w", err)
		}
	}
	// Deletions a crash interrupted are finished.
	if err := os.RemoveAll(filepath.Join(dir, "trash")); err != nil {
		return nil, fmt.Errorf("server: cannot empty %s: %w", filepath.Join(dir, "trash"), err)
	}
	return &store{dir: dir, keep: keep}, nil
}

func (s *store) stateDir() string          { return filepath.Join(s.dir, "state") }
func (s *store) catalogFile() string       { return filepath.Join(s.dir, "catalog.sql") }
func (s *store) jobDir(name string) string { return filepath.Join(s.dir, "jobs", name) }
func (s *store) versionFile(name string, v int) string {
	return filepath.Join(s.jobDir(name), "versions", strconv.Itoa(v)+".sql")
}

// catalog returns the statements of catalog.sql ("" when there is none).
func (s *store) catalog() (string, error) {
	b, err := os.ReadFile(s.catalogFile())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return string(b), err
}

// appendCatalog adds statements to catalog.sql.
func (s *store) appendCatalog(stmts []string) error {
	old, err := s.catalog()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString(old)
	for _, st := range stmts {
		b.WriteString(st)
		b.WriteString(";\n")
	}
	return writeFile(s.catalogFile(), b.Bytes())
}

// jobs returns the records of every job.
func (s *store) jobs() ([]jobRecord, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, "jobs"))
	if err != nil {
		return nil, err
	}
	var out []jobRecord
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.jobDir(e.Name()), "job.json"))
		if errors.Is(err, fs.ErrNotExist) {
			// A job whose creation a crash interrupted: it was never
			// acknowledged.
			if err := os.RemoveAll(s.jobDir(e.Name())); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		var r jobRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(s.jobDir(e.Name()), "job.json"), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// saveJob writes a job's record.
func (s *store) saveJob(r jobRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(s.jobDir(r.Name), "job.json"), append(b, '\n'))
}

// saveVersion writes the SQL of version v of job name and removes the
// versions older than the last s.keep.
func (s *store) saveVersion(name string, v int, sql string) error {
	if err := writeFile(s.versionFile(name, v), []byte(sql)); err != nil {
		return err
	}
	versions, err := s.versionNumbers(name)
	if err != nil {
		return err
	}
	for _, old := range versions {
		if old <= v-s.keep {
			if err := os.Remove(s.versionFile(name, old)); err != nil {
				return err
			}
		}
	}
	return nil
}

// versionNumbers lists the versions kept of job name, oldest first.
func (s *store) versionNumbers(name string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(s.jobDir(name), "versions"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".sql")); err == nil && strings.HasSuffix(e.Name(), ".sql") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// version is a kept version of a job.
type version struct {
	Version   int
	CreatedAt time.Time
	SQL       string
}

// versions returns the kept versions of job name, oldest first.
func (s *store) versions(name string) ([]version, error) {
	nums, err := s.versionNumbers(name)
	if err != nil {
		return nil, err
	}
	var out []version
	for _, n := range nums {
		path := s.versionFile(name, n)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		info, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		out = append(out, version{Version: n, CreatedAt: info.ModTime().UTC(), SQL: string(b)})
	}
	return out, nil
}

// sql returns the SQL of version v of job name.
func (s *store) sql(name string, v int) (string, error) {
	b, err := os.ReadFile(s.versionFile(name, v))
	return string(b), err
}

// deleteJob removes a job's directory: first moved to trash/ (one
// rename), so that a crash leaves it whole or gone.
func (s *store) deleteJob(name string) error {
	trash := filepath.Join(s.dir, "trash")
	if err := os.MkdirAll(trash, 0o700); err != nil {
		return err
	}
	var suffix [8]byte
	rand.Read(suffix[:])
	doomed := filepath.Join(trash, name+"-"+hex.EncodeToString(suffix[:]))
	if err := os.Rename(s.jobDir(name), doomed); err != nil {
		return err
	}
	if err := syncDir(filepath.Join(s.dir, "jobs")); err != nil {
		return err
	}
	return os.RemoveAll(doomed)
}

// writeFile writes data to path atomically: into a temporary file of the
// same directory, synced, then renamed over path, and the directory
// synced so that the rename survives a crash.
func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return syncDir(dir)
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
