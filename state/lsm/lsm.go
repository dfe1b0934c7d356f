// Package lsm is the durable local state backend: every operator's store
// lives in one embedded LSM tree (Pebble) in a directory. Writes of all
// stores go into one pending batch; Commit writes that batch together with
// the sources' positions, atomically and synced, so that after a crash the
// directory holds the state of one complete checkpoint.
//
// Storage faults (a full disk, a failed write, a corrupt file, a lost
// write-ahead log) are errors that say what to do, never a panic or an
// empty state in place of a lost one: see fault.go, MarkerFile and
// ReserveFile.
//
// Key layout: 's' + len(id) + id + key for store entries, 'o' + id for a
// store's offsets table, 'p' + position key for source positions, 'c' for
// the number of the last checkpoint, 'l' for the number of a loss of
// checkpoints and 'd' + job prefix for a job started afresh since (see
// Backend.Store).
package lsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluicesql/sluice/state"
)

// Backend is a state.Backend over a Pebble database.
type Backend struct {
	dir    string
	fs     vfs.FS
	db     *pebble.DB
	faults *faults
	marker *marker

	mu      sync.Mutex // guards what follows, and every read that merges pending
	pending *pebble.Batch
	stores  map[string]*store
	closed  bool
	// abandoned is set when Pebble panicked in a commit: its commit
	// pipeline stays locked, and closing the database would hang.
	abandoned bool
	// seq is the number of the last checkpoint committed.
	seq uint64
	// loss is nonzero when checkpoints committed earlier were found
	// missing; lost says how, and cleared lists the job prefixes started
	// afresh since (see Store).
	loss    uint64
	lost    error
	cleared []string

	// group: the commits waiting for the next synced write, and whether
	// one of them is writing (the leader); see Commit.
	group struct {
		sync.Mutex
		queue   []*commitReq
		leading bool
	}
}

// commitReq is a Commit waiting for its group's synced write.
type commitReq struct {
	positions map[string]int64
	// wake says that the group holding this commit was written (false;
	// err is its outcome) or that this commit leads the next (true).
	wake chan bool
	err  error
}

// Options configure a Backend. The zero value is the default.
type Options struct {
	// FS is the filesystem the state directory is on (vfs.Default if nil).
	FS vfs.FS
	// Reserve is the disk space, in bytes, set aside in ReserveFile and
	// freed when the disk fills up, so that the store stops cleanly:
	// 0 means DefaultReserve, a negative value none.
	Reserve int64
}

// Open opens (or creates) the state directory dir with the default
// options.
func Open(dir string) (*Backend, error) { return Options{}.Open(dir) }

// Open opens (or creates) the state directory dir.
func (o Options) Open(dir string) (*Backend, error) {
	fsys := o.FS
	if fsys == nil {
		fsys = vfs.Default
	}
	size := o.Reserve
	if size == 0 {
		size = DefaultReserve
	}
	f := &faults{dir: dir}
	reservePath := fsys.PathJoin(dir, ReserveFile)
	popts := &pebble.Options{
		FS: vfs.OnDiskFull(fsys, func() {
			f.full.Store(true)
			fsys.Remove(reservePath)
		}),
		Logger:        logger{f},
		EventListener: f.listener(),
	}
	var db *pebble.DB
	err := guard(func() (err error) {
		db, err = pebble.Open(dir, popts)
		return err
	})
	if err == nil {
		err = f.get()
	}
	if err != nil {
		if db != nil {
			guard(db.Close)
		}
		return nil, fmt.Errorf("lsm: cannot open %w", f.explain(err))
	}
	b := &Backend{dir: dir, fs: fsys, db: db, faults: f, stores: map[string]*store{}}
	b.pending = db.NewIndexedBatch()
	if err := b.open(reservePath, size); err != nil {
		b.pending.Close()
		guard(db.Close)
		if b.marker != nil {
			b.marker.close()
		}
		return nil, fmt.Errorf("lsm: cannot open %w", f.explain(err))
	}
	return b, nil
}

// open sets the reserve aside, and checks the store against its marker.
func (b *Backend) open(reservePath string, size int64) error {
	if size > 0 {
		if err := reserve(b.fs, b.dir, reservePath, size); err != nil {
			return err
		}
	}
	var err error
	if b.seq, err = b.getUint(b.db, counterKey); err != nil {
		return err
	}
	if err := b.loadLoss(); err != nil {
		return err
	}
	path := b.fs.PathJoin(b.dir, MarkerFile)
	mark, found, err := readMarker(b.fs, path)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	switch {
	case !found && b.seq == 0:
		// A new directory, or one of a version without markers.
	case !found:
		b.lose(max(b.seq, b.loss), fmt.Errorf("state directory %s: its checkpoint marker %s is missing or unreadable, "+
			"so whether the store holds its last checkpoint (%d) cannot be checked: the directory may be incomplete (a partial copy?)",
			b.dir, path, b.seq))
	case mark > b.seq:
		b.lose(mark, fmt.Errorf("state directory %s lost committed checkpoints: %s says checkpoint %d was committed, but the store holds only checkpoint %d: "+
			"its write-ahead log (the *.log files) is missing or was cut short",
			b.dir, path, mark, b.seq))
	}
	if !found {
		// After a loss, the marker is ahead of the store until the next
		// commit: if none comes, the loss is found again.
		if b.marker, err = createMarker(b.fs, b.dir, path, b.seq); err != nil {
			return fmt.Errorf("cannot write %s: %w", path, err)
		}
		return nil
	}
	if b.marker, err = openMarker(b.fs, path); err != nil {
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	return nil
}

// lose records in the pending batch, durable with the next Commit, that
// the checkpoints after the store's and up to last were lost: every job
// with state here is refused until started afresh (see Store).
func (b *Backend) lose(last uint64, why error) {
	b.seq = last + 1
	b.loss = b.seq
	b.lost = why
	b.cleared = nil
	b.pending.Set(counterKey, binary.BigEndian.AppendUint64(nil, b.seq), nil)
	b.pending.Set(lossKey, append(binary.BigEndian.AppendUint64(nil, b.loss), why.Error()...), nil)
}

// loadLoss reads the record of a loss, if any, and the job prefixes
// started afresh since.
func (b *Backend) loadLoss() error {
	v, closer, err := b.db.Get(lossKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(v) < 8 {
		closer.Close()
		return fmt.Errorf("corrupt key %q in the store", lossKey)
	}
	b.loss = binary.BigEndian.Uint64(v)
	b.lost = errors.New(string(v[8:]))
	closer.Close()
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: []byte{'d'}, UpperBound: []byte{'e'}})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if v := it.Value(); len(v) == 8 && binary.BigEndian.Uint64(v) == b.loss {
			b.cleared = append(b.cleared, string(it.Key()[1:]))
		}
	}
	return it.Close()
}

// refused returns the error a job whose store IDs begin with prefix gets
// when checkpoints were lost and it was not started afresh since.
func (b *Backend) refused(prefix string) error {
	if b.loss == 0 {
		return nil
	}
	for _, c := range b.cleared {
		if strings.HasPrefix(prefix, c) {
			return nil
		}
	}
	return fmt.Errorf("%w. The state of the jobs that used it cannot be fully recovered, "+
		"and a job resumed over it would redo (and its sinks repeat) the work of the lost checkpoints: "+
		"start the job from scratch with SET 'state.start-fresh' = 'true' (what its sinks wrote before stays), "+
		"or restore the directory from a backup", b.lost)
}

// check returns the error every call fails with: the backend's storage
// fault, or that it is closed. b.mu is held.
func (b *Backend) check() error {
	if err := b.faults.get(); err != nil {
		return err
	}
	if b.closed {
		return errors.New("lsm: the state backend is closed")
	}
	return nil
}

// getUint reads an 8-byte counter (0 if absent).
func (b *Backend) getUint(r pebble.Reader, key []byte) (uint64, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("corrupt key %q in the store", key)
	}
	return binary.BigEndian.Uint64(v), nil
}

// Store implements state.Backend. When checkpoints were lost (see
// MarkerFile), the store of a job that was not started afresh since (with
// Drop) is refused: its state is older than what its sinks were given.
// A job that never ran here is refused too, since its first checkpoints may
// be among the lost ones.
func (b *Backend) Store(id string) (state.Store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(); err != nil {
		return nil, err
	}
	if s, ok := b.stores[id]; ok {
		return s, nil
	}
	if err := b.refused(id); err != nil {
		return nil, err
	}
	s := &store{b: b, id: id, prefix: storePrefix(id), offsets: state.NewOffsets()}
	v, closer, err := b.pending.Get(offsetsKey(id))
	switch {
	case err == nil:
		err = s.offsets.LoadBinary(v)
		closer.Close()
		if err != nil {
			return nil, fmt.Errorf("lsm: store %s: %w", id, err)
		}
	case !errors.Is(err, pebble.ErrNotFound):
		return nil, fmt.Errorf("lsm: cannot read offsets of %s: %w", id, b.fail(err))
	}
	b.stores[id] = s
	return s, nil
}

// Commit implements state.Backend. It writes the pending batch with the
// positions and the checkpoint's number, synced, then the number into the
// marker (MarkerFile). A checkpoint that would leave the disk with less
// than minFree is refused before anything is written.
//
// Commits in groups: the jobs of an engine share the backend, and a
// server's thousand jobs each checkpoint every second. A Commit that
// comes while another is writing waits, and the next write carries the
// positions of every Commit that waited: one synced Pebble commit and one
// marker sync for the group. Each Commit returns once the write that
// carries its positions (and every store write made before it was
// called) is durable, with that write's error.
func (b *Backend) Commit(job string, positions map[string]int64) error {
	req := &commitReq{positions: positions, wake: make(chan bool, 1)}
	g := &b.group
	g.Lock()
	g.queue = append(g.queue, req)
	if g.leading {
		g.Unlock()
		if lead := <-req.wake; !lead {
			return req.err
		}
		g.Lock() // handed the lead, with g.leading still set
	}
	g.leading = true
	reqs := g.queue
	g.queue = nil
	g.Unlock()

	err := errors.New("lsm: cannot commit checkpoint: the write of its group failed")
	defer func() {
		// Deferred: the others are answered even if the write panics.
		for _, r := range reqs {
			if r != req {
				r.err = err
				r.wake <- false
			}
		}
		// The first commit that waited meanwhile leads the next group.
		g.Lock()
		if len(g.queue) > 0 {
			g.queue[0].wake <- true
		} else {
			g.leading = false
		}
		g.Unlock()
	}()
	err = b.commitGroup(reqs)
	return err
}

// commitGroup writes the pending batch with the positions of reqs, then
// the checkpoint's number into the marker.
func (b *Backend) commitGroup(reqs []*commitReq) error {
	seq, err := b.commit(reqs)
	if err != nil {
		return err
	}
	// Outside b.mu: the marker's sync need not keep the stores waiting.
	if err := b.marker.write(seq); err != nil {
		return fmt.Errorf("lsm: cannot commit checkpoint: cannot write %s: %w", b.marker.path, b.fail(err))
	}
	return nil
}

// commit writes the pending batch with the positions of reqs, and
// returns the checkpoint's number.
func (b *Backend) commit(reqs []*commitReq) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(); err != nil {
		return 0, err
	}
	for _, r := range reqs {
		for k, v := range r.positions {
			if err := b.pending.Set(positionKey(k), binary.AppendVarint(nil, v), nil); err != nil {
				return 0, fmt.Errorf("lsm: cannot record position %s: %w", k, err)
			}
		}
	}
	seq := b.seq + 1
	if err := b.pending.Set(counterKey, binary.BigEndian.AppendUint64(nil, seq), nil); err != nil {
		return 0, fmt.Errorf("lsm: cannot number the checkpoint: %w", err)
	}
	if err := b.roomFor(len(b.pending.Repr())); err != nil {
		// A fault too: the pending writes are not to be committed by a
		// later call.
		return 0, fmt.Errorf("lsm: cannot commit checkpoint: %w", b.fail(err))
	}
	err := guard(func() error { return b.pending.Commit(pebble.Sync) })
	var p *panicked
	if errors.As(err, &p) {
		b.abandoned = true
	}
	if err == nil {
		// A commit whose log write failed ends in Logger.Fatalf, and
		// Pebble then reports success.
		err = b.faults.get()
	}
	if err != nil {
		return 0, fmt.Errorf("lsm: cannot commit checkpoint: %w", b.fail(err))
	}
	b.seq = seq
	b.pending.Close()
	b.pending = b.db.NewIndexedBatch()
	return seq, nil
}

// minFree is the free space Commit wants on the disk besides the batch it
// writes: a checkpoint refused for want of space fails cleanly, where a
// write of Pebble's that fails may not (see ReserveFile).
const minFree = 1 << 20

// roomFor returns an error if the disk lacks room for a batch of n bytes.
func (b *Backend) roomFor(n int) error {
	du, err := b.fs.GetDiskUsage(b.dir)
	if err != nil || du.AvailBytes >= uint64(n)+minFree {
		return nil // where the space is unknown, Pebble's writes will tell
	}
	return &Error{Dir: b.dir, Err: syscall.ENOSPC, todo: todoSpace,
		what: fmt.Sprintf("no space left on device (%s free, a checkpoint of %s to write and %s to keep free)", size(du.AvailBytes), size(uint64(n)), size(minFree))}
}

// fail records err, a failure of Pebble's, as the backend's fault, and
// returns the fault.
func (b *Backend) fail(err error) error {
	b.faults.record(err)
	return b.faults.get()
}

// Positions implements state.Backend: the positions of the last Commit.
func (b *Backend) Positions(job string) (map[string]int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(); err != nil {
		return nil, err
	}
	if err := b.refused(state.JobPrefix(job)); err != nil {
		return nil, err
	}
	return b.positions(b.db, job)
}

// reader is what positions reads: the database (what is committed) or
// the pending batch (with what is not yet).
type reader interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}

// positions returns job's positions as r holds them.
func (b *Backend) positions(r reader, job string) (map[string]int64, error) {
	lower := positionKey(state.JobPrefix(job))
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upperBound(lower)})
	if err != nil {
		return nil, fmt.Errorf("lsm: cannot read positions: %w", b.fail(err))
	}
	defer it.Close()
	out := map[string]int64{}
	for it.First(); it.Valid(); it.Next() {
		v, n := binary.Varint(it.Value())
		if n <= 0 {
			return nil, fmt.Errorf("lsm: corrupt position %q", it.Key())
		}
		out[string(it.Key()[1:])] = v
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("lsm: cannot read positions: %w", b.fail(err))
	}
	return out, nil
}

// ForgetPositions implements state.Backend: the positions are deleted in
// the pending batch.
func (b *Backend) ForgetPositions(keys []string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(); err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.pending.Delete(positionKey(k), nil); err != nil {
			return fmt.Errorf("lsm: cannot forget position %s: %w", k, err)
		}
	}
	return nil
}

// Drop implements state.Backend: the job's entries are deleted in the
// pending batch. After a loss of checkpoints, it also records that the
// job started afresh, which lifts its refusal (see Store).
func (b *Backend) Drop(job string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(); err != nil {
		return err
	}
	prefix := state.JobPrefix(job)
	for id := range b.stores {
		if strings.HasPrefix(id, prefix) {
			delete(b.stores, id)
		}
	}
	if prefix == "" {
		// Every store: one range deletion, however many entries.
		if err := b.pending.DeleteRange([]byte{'s'}, []byte{'t'}, nil); err != nil {
			return fmt.Errorf("lsm: cannot drop the state of %s: %w", job, err)
		}
		return b.dropRest(prefix)
	}
	// Store entries are keyed by the length of their store's ID first, so
	// that one ID prefixing another cannot mix their keys: walk them all.
	it, err := b.pending.NewIter(&pebble.IterOptions{LowerBound: []byte{'s'}, UpperBound: []byte{'t'}})
	if err != nil {
		return fmt.Errorf("lsm: cannot drop the state of %s: %w", job, b.fail(err))
	}
	var doomed [][]byte
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		n, w := binary.Uvarint(k[1:])
		if w <= 0 || uint64(len(k)-1-w) < n {
			continue
		}
		if strings.HasPrefix(string(k[1+w:1+w+int(n)]), prefix) {
			doomed = append(doomed, bytes.Clone(k))
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("lsm: cannot drop the state of %s: %w", job, b.fail(err))
	}
	for _, k := range doomed {
		if err := b.pending.Delete(k, nil); err != nil {
			return fmt.Errorf("lsm: cannot drop the state of %s: %w", job, err)
		}
	}
	return b.dropRest(prefix)
}

// dropRest is Drop's deletion of the offsets and positions of the jobs
// whose store IDs begin with prefix, and its record of a job started
// afresh. b.mu is held.
func (b *Backend) dropRest(prefix string) error {
	job := strings.TrimSuffix(prefix, "/")
	for _, kind := range []byte{'o', 'p'} {
		lower := append([]byte{kind}, prefix...)
		if err := b.pending.DeleteRange(lower, upperBound(lower), nil); err != nil {
			return fmt.Errorf("lsm: cannot drop the state of %s: %w", job, err)
		}
	}
	if b.loss != 0 {
		key := append([]byte{'d'}, prefix...)
		if err := b.pending.Set(key, binary.BigEndian.AppendUint64(nil, b.loss), nil); err != nil {
			return fmt.Errorf("lsm: cannot drop the state of %s: %w", job, err)
		}
		b.cleared = append(b.cleared, prefix)
	}
	return nil
}

// Err returns the backend's storage fault, if it has one: then every call
// fails, and the backend is of no further use (close it; open the
// directory again once the fault is dealt with).
func (b *Backend) Err() error { return b.faults.get() }

// Close implements state.Backend; uncommitted writes are dropped. After a
// storage fault (already reported by the call that met it) it returns nil.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	err := b.marker.close()
	if b.abandoned {
		return nil
	}
	b.pending.Close()
	if cerr := guard(b.db.Close); cerr != nil {
		err = cerr
	}
	if b.faults.get() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lsm: cannot close %w", b.faults.explain(err))
	}
	return nil
}

// guard runs fn and turns a panic of Pebble's over a failure of the
// storage into an error (a *panicked); any other panic is a bug, and goes
// on.
func guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok || !storageError(e) {
				panic(r)
			}
			err = &panicked{e}
		}
	}()
	return fn()
}

// panicked is a storage error Pebble panicked with.
type panicked struct{ err error }

func (p *panicked) Error() string { return p.err.Error() }
func (p *panicked) Unwrap() error { return p.err }

type store struct {
	b       *Backend
	id      string
	prefix  []byte
	offsets *state.Offsets
	key     []byte
}

func (s *store) k(key []byte) []byte {
	s.key = append(append(s.key[:0], s.prefix...), key...)
	return s.key
}

func (s *store) Get(key []byte) ([]byte, bool, error) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if err := s.b.check(); err != nil {
		return nil, false, err
	}
	v, closer, err := s.b.pending.Get(s.k(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("lsm: %s: %w", s.id, s.b.fail(err))
	}
	out := bytes.Clone(v)
	closer.Close()
	return out, true, nil
}

func (s *store) Put(key, value []byte) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if err := s.b.check(); err != nil {
		return err
	}
	return s.b.pending.Set(s.k(key), value, nil)
}

func (s *store) Delete(key []byte) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if err := s.b.check(); err != nil {
		return err
	}
	return s.b.pending.Delete(s.k(key), nil)
}

func (s *store) Scan(prefix []byte, fn func(key, value []byte) bool) error {
	s.b.mu.Lock()
	if err := s.b.check(); err != nil {
		s.b.mu.Unlock()
		return err
	}
	lower := append(bytes.Clone(s.prefix), prefix...)
	it, err := s.b.pending.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upperBound(lower)})
	if err != nil {
		err = s.b.fail(err)
		s.b.mu.Unlock()
		return fmt.Errorf("lsm: %s: %w", s.id, err)
	}
	type kv struct{ k, v []byte }
	var all []kv
	for it.First(); it.Valid(); it.Next() {
		all = append(all, kv{bytes.Clone(it.Key()[len(s.prefix):]), bytes.Clone(it.Value())})
	}
	if err = it.Close(); err != nil {
		err = s.b.fail(err)
	}
	s.b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("lsm: %s: %w", s.id, err)
	}
	// fn runs without the lock: it may call Put or Delete.
	for _, e := range all {
		if !fn(e.k, e.v) {
			break
		}
	}
	return nil
}

func (s *store) Offsets() *state.Offsets { return s.offsets }

// Checkpoint writes the offsets table into the pending batch, beside the
// writes it covers.
func (s *store) Checkpoint() error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if err := s.b.check(); err != nil {
		return err
	}
	return s.b.pending.Set(offsetsKey(s.id), s.offsets.AppendBinary(nil), nil)
}

var (
	counterKey = []byte{'c'}
	lossKey    = []byte{'l'}
)

func storePrefix(id string) []byte {
	p := []byte{'s'}
	p = binary.AppendUvarint(p, uint64(len(id)))
	return append(p, id...)
}

func offsetsKey(id string) []byte { return append([]byte{'o'}, id...) }

func positionKey(k string) []byte { return append([]byte{'p'}, k...) }

// upperBound returns the smallest key greater than every key with prefix p.
func upperBound(p []byte) []byte {
	u := bytes.Clone(p)
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] < 0xff {
			u[i]++
			return u[:i+1]
		}
	}
	return nil
}
