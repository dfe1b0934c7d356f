package mqtt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mochi-mqtt/server/v2/packets"
)

// message is what the sink publishes.
type message struct {
	topic       string
	payload     []byte
	qos         byte
	retain      bool
	contentType string
	props       []packets.UserProperty
}

// size is what the message takes in the buffer, about.
func (m *message) size() int64 {
	n := int64(16 + len(m.topic) + len(m.payload) + len(m.contentType))
	for _, p := range m.props {
		n += int64(4 + len(p.Key) + len(p.Val))
	}
	return n
}

// encode appends m's encoding to dst.
func (m *message) encode(dst []byte) []byte {
	flags := m.qos
	if m.retain {
		flags |= 4
	}
	dst = append(dst, flags)
	dst = appendString(dst, m.topic)
	dst = appendString(dst, m.contentType)
	dst = binary.AppendUvarint(dst, uint64(len(m.props)))
	for _, p := range m.props {
		dst = appendString(dst, p.Key)
		dst = appendString(dst, p.Val)
	}
	return append(dst, m.payload...)
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

var errBadRecord = errors.New("malformed buffered message")

func decodeMessage(b []byte) (*message, error) {
	if len(b) < 1 {
		return nil, errBadRecord
	}
	m := &message{qos: b[0] & 3, retain: b[0]&4 != 0}
	b = b[1:]
	var ok bool
	str := func() string {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			ok = false
			return ""
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s
	}
	ok = true
	m.topic = str()
	m.contentType = str()
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errBadRecord
	}
	b = b[k:]
	for i := uint64(0); i < n && ok; i++ {
		m.props = append(m.props, packets.UserProperty{Key: str(), Val: str()})
	}
	if !ok {
		return nil, errBadRecord
	}
	m.payload = append([]byte(nil), b...)
	return m, nil
}

// buffer is the sink's store-and-forward queue: the messages it could not
// deliver, in order, numbered by sequence. The oldest is at head(); the
// next appended gets tail().
type buffer interface {
	head() uint64
	tail() uint64
	// bytes is what the messages from head on take.
	bytes() int64
	add(m *message) error
	// peek returns up to max messages from seq from (>= head) on.
	peek(from uint64, max int) ([]*message, error)
	// advance forgets the messages before seq to.
	advance(to uint64) error
	// sync makes what was added and advanced durable.
	sync() error
	close() error
}

// memBuffer is a buffer for a job without a state directory: it does not
// outlive the process.
type memBuffer struct {
	first uint64
	msgs  []*message
	size  int64
}

func (b *memBuffer) head() uint64 { return b.first }
func (b *memBuffer) tail() uint64 { return b.first + uint64(len(b.msgs)) }
func (b *memBuffer) bytes() int64 { return b.size }
func (b *memBuffer) sync() error  { return nil }
func (b *memBuffer) close() error { b.msgs = nil; return nil }
func (b *memBuffer) add(m *message) error {
	b.msgs = append(b.msgs, m)
	b.size += m.size()
	return nil
}

func (b *memBuffer) peek(from uint64, max int) ([]*message, error) {
	if from < b.first {
		from = b.first
	}
	i := int(from - b.first)
	if i >= len(b.msgs) {
		return nil, nil
	}
	return append([]*message(nil), b.msgs[i:min(len(b.msgs), i+max)]...), nil
}

func (b *memBuffer) advance(to uint64) error {
	for b.first < to && len(b.msgs) > 0 {
		b.size -= b.msgs[0].size()
		b.msgs[0] = nil
		b.msgs = b.msgs[1:]
		b.first++
	}
	return nil
}

// segmentSize is the size at which the disk buffer starts a new file.
const segmentSize = 4 << 20

// segment is one file of a disk buffer: records numbered from first on,
// starting at offs.
type segment struct {
	first uint64
	offs  []int64 // each record's start; its end is the next start or end
	end   int64
	path  string
}

func (s *segment) last() uint64 { return s.first + uint64(len(s.offs)) }

// diskBuffer keeps the messages in append-only files of records
// (length, CRC-32C, message) named by their first sequence number, and the
// head in a file of its own. A record cut short by a crash is cut off
// when the buffer opens.
type diskBuffer struct {
	dir   string
	segs  []*segment
	first uint64 // head
	size  int64  // bytes of the records from head on

	f     *os.File // the last segment, for appending
	w     *bufio.Writer
	dirty bool // written since the last sync
	moved bool // head moved since the last sync
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func segName(first uint64) string { return fmt.Sprintf("seg-%020d.log", first) }

// openDiskBuffer opens (or creates) the buffer in dir.
func openDiskBuffer(dir string) (*diskBuffer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the buffer directory: %w", err)
	}
	b := &diskBuffer{dir: dir}
	if h, err := os.ReadFile(filepath.Join(dir, "head")); err == nil {
		if len(h) != 12 || crc32.Checksum(h[:8], crcTable) != binary.LittleEndian.Uint32(h[8:]) {
			return nil, fmt.Errorf("the buffer's head file %s is damaged", filepath.Join(dir, "head"))
		}
		b.first = binary.LittleEndian.Uint64(h[:8])
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var firsts []uint64
	for _, e := range names {
		n := e.Name()
		if !strings.HasPrefix(n, "seg-") || !strings.HasSuffix(n, ".log") {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(n, "seg-"), ".log"), 10, 64)
		if err != nil {
			continue
		}
		firsts = append(firsts, v)
	}
	sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
	for i, first := range firsts {
		s := &segment{first: first, path: filepath.Join(dir, segName(first))}
		if len(b.segs) > 0 && b.segs[len(b.segs)-1].last() != first {
			return nil, fmt.Errorf("the buffer in %s has a gap before %s", dir, segName(first))
		}
		if err := s.scan(i == len(firsts)-1); err != nil {
			return nil, err
		}
		b.segs = append(b.segs, s)
	}
	if len(b.segs) == 0 {
		b.segs = []*segment{{first: b.first, path: filepath.Join(dir, segName(b.first))}}
	}
	if b.first < b.segs[0].first {
		b.first = b.segs[0].first
	}
	if b.first > b.tail() {
		b.first = b.tail()
	}
	if err := b.dropSegments(); err != nil {
		return nil, err
	}
	b.size = b.bytesFrom(b.first)
	last := b.segs[len(b.segs)-1]
	if b.f, err = os.OpenFile(last.path, os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
		return nil, err
	}
	if _, err := b.f.Seek(last.end, io.SeekStart); err != nil {
		return nil, err
	}
	b.w = bufio.NewWriterSize(b.f, 64<<10)
	return b, nil
}

// scan reads the segment's records. A bad record in the last segment
// (a crash while appending) is cut off with what follows; elsewhere it is
// an error.
func (s *segment) scan(last bool) error {
	f, err := os.Open(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var off int64
	var hdr [8]byte
	buf := make([]byte, 0, 4096)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if err == io.EOF {
				break
			}
			return s.cut(last, off)
		}
		n := binary.LittleEndian.Uint32(hdr[:4])
		if n > maxPacket {
			return s.cut(last, off)
		}
		buf = append(buf[:0], make([]byte, n)...)
		if _, err := io.ReadFull(r, buf); err != nil || crc32.Checksum(buf, crcTable) != binary.LittleEndian.Uint32(hdr[4:]) {
			return s.cut(last, off)
		}
		s.offs = append(s.offs, off)
		off += 8 + int64(n)
	}
	s.end = off
	return nil
}

func (s *segment) cut(last bool, off int64) error {
	if !last {
		return fmt.Errorf("the buffer file %s is damaged at byte %d", s.path, off)
	}
	s.end = off
	return os.Truncate(s.path, off)
}

func (b *diskBuffer) head() uint64 { return b.first }
func (b *diskBuffer) tail() uint64 { return b.segs[len(b.segs)-1].last() }
func (b *diskBuffer) bytes() int64 { return b.size }

// bytesFrom is what the records from seq on take.
func (b *diskBuffer) bytesFrom(seq uint64) int64 {
	var n int64
	for _, s := range b.segs {
		if s.last() <= seq {
			continue
		}
		start := int64(0)
		if seq > s.first {
			start = s.offs[seq-s.first]
		}
		n += s.end - start
	}
	return n
}

func (b *diskBuffer) add(m *message) error {
	last := b.segs[len(b.segs)-1]
	if last.end >= segmentSize {
		if err := b.roll(); err != nil {
			return err
		}
		last = b.segs[len(b.segs)-1]
	}
	body := m.encode(nil)
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(len(body)))
	binary.LittleEndian.PutUint32(hdr[4:], crc32.Checksum(body, crcTable))
	if _, err := b.w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := b.w.Write(body); err != nil {
		return err
	}
	last.offs = append(last.offs, last.end)
	last.end += 8 + int64(len(body))
	b.size += 8 + int64(len(body))
	b.dirty = true
	return nil
}

// roll closes the last segment (durably) and starts another.
func (b *diskBuffer) roll() error {
	if err := b.w.Flush(); err != nil {
		return err
	}
	if err := b.f.Sync(); err != nil {
		return err
	}
	if err := b.f.Close(); err != nil {
		return err
	}
	s := &segment{first: b.tail()}
	s.path = filepath.Join(b.dir, segName(s.first))
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	b.f, b.w = f, bufio.NewWriterSize(f, 64<<10)
	b.segs = append(b.segs, s)
	return syncDir(b.dir)
}

func (b *diskBuffer) peek(from uint64, max int) ([]*message, error) {
	if from < b.first {
		from = b.first
	}
	if err := b.w.Flush(); err != nil {
		return nil, err
	}
	var out []*message
	for _, s := range b.segs {
		if s.last() <= from || len(out) >= max {
			continue
		}
		f, err := os.Open(s.path)
		if err != nil {
			return nil, err
		}
		for seq := max64(from, s.first); seq < s.last() && len(out) < max; seq++ {
			i := seq - s.first
			end := s.end
			if int(i)+1 < len(s.offs) {
				end = s.offs[i+1]
			}
			rec := make([]byte, end-s.offs[i])
			if _, err := f.ReadAt(rec, s.offs[i]); err != nil {
				f.Close()
				return nil, fmt.Errorf("cannot read the buffer file %s: %w", s.path, err)
			}
			m, err := decodeMessage(rec[8:])
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("buffer file %s: %w", s.path, err)
			}
			out = append(out, m)
		}
		f.Close()
	}
	return out, nil
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

func (b *diskBuffer) advance(to uint64) error {
	if to > b.tail() {
		to = b.tail()
	}
	if to <= b.first {
		return nil
	}
	b.first = to
	b.size = b.bytesFrom(to)
	b.moved = true
	return b.dropSegments()
}

// dropSegments removes the files all of whose records are before head,
// but the last.
func (b *diskBuffer) dropSegments() error {
	for len(b.segs) > 1 && b.segs[0].last() <= b.first {
		if err := os.Remove(b.segs[0].path); err != nil && !os.IsNotExist(err) {
			return err
		}
		b.segs = b.segs[1:]
	}
	return nil
}

func (b *diskBuffer) sync() error {
	if b.dirty {
		if err := b.w.Flush(); err != nil {
			return err
		}
		if err := b.f.Sync(); err != nil {
			return err
		}
		b.dirty = false
	}
	if b.moved {
		var h [12]byte
		binary.LittleEndian.PutUint64(h[:8], b.first)
		binary.LittleEndian.PutUint32(h[8:], crc32.Checksum(h[:8], crcTable))
		tmp := filepath.Join(b.dir, "head.tmp")
		if err := os.WriteFile(tmp, h[:], 0o644); err != nil {
			return err
		}
		f, err := os.Open(tmp)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(b.dir, "head")); err != nil {
			return err
		}
		if err := syncDir(b.dir); err != nil {
			return err
		}
		b.moved = false
	}
	return nil
}

func (b *diskBuffer) close() error {
	err := b.sync()
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	return err
}
