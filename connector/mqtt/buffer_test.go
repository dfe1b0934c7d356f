package mqtt

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
)

func msg(i int) *message {
	return &message{topic: fmt.Sprintf("t/%d", i), payload: []byte(fmt.Sprintf("payload %d", i)), qos: byte(i % 3), retain: i%2 == 0,
		contentType: "text/plain", props: []packets.UserProperty{{Key: "k", Val: fmt.Sprint(i)}}}
}

func checkPeek(t *testing.T, b buffer, from, to int) {
	t.Helper()
	got, err := b.peek(uint64(from), to-from+10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != to-from {
		t.Fatalf("peek from %d: %d messages, want %d", from, len(got), to-from)
	}
	for i, m := range got {
		w := msg(from + i)
		if m.topic != w.topic || string(m.payload) != string(w.payload) || m.qos != w.qos || m.retain != w.retain ||
			m.contentType != w.contentType || len(m.props) != 1 || m.props[0] != w.props[0] {
			t.Fatalf("message %d: %+v, want %+v", from+i, m, w)
		}
	}
}

// TestDiskBuffer appends across segments, advances, reopens, and reopens
// after a crash cut the last record short.
func TestDiskBuffer(t *testing.T) {
	dir := t.TempDir()
	b, err := openDiskBuffer(dir)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 1<<20)
	for i := range 40 { // about 12 MiB: several segments
		m := msg(i)
		if i%4 == 0 {
			m.payload = append([]byte(fmt.Sprintf("payload %d", i)), big...)
		}
		if err := b.add(m); err != nil {
			t.Fatal(err)
		}
	}
	for i := 40; i < 100; i++ {
		b.add(msg(i))
	}
	if len(b.segs) < 3 {
		t.Fatalf("%d segments", len(b.segs))
	}
	if err := b.advance(50); err != nil {
		t.Fatal(err)
	}
	if len(b.segs) != 1 {
		t.Errorf("segments before the head were kept: %d", len(b.segs))
	}
	checkPeek(t, b, 50, 100)
	size := b.bytes()
	if err := b.close(); err != nil {
		t.Fatal(err)
	}
	b, err = openDiskBuffer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.head() != 50 || b.tail() != 100 || b.bytes() != size {
		t.Fatalf("reopened: head %d tail %d bytes %d, want 50 100 %d", b.head(), b.tail(), b.bytes(), size)
	}
	checkPeek(t, b, 60, 100)
	b.add(msg(100))
	b.sync()
	b.close()
	// A crash in the middle of an append: the last record is cut short.
	last := filepath.Join(dir, segName(b.segs[len(b.segs)-1].first))
	st, _ := os.Stat(last)
	os.Truncate(last, st.Size()-3)
	b, err = openDiskBuffer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.tail() != 100 {
		t.Fatalf("tail %d after a cut record, want 100", b.tail())
	}
	b.add(msg(100))
	b.add(msg(101))
	checkPeek(t, b, 50, 102)
	b.close()
}

func TestMemBuffer(t *testing.T) {
	b := &memBuffer{}
	for i := range 10 {
		b.add(msg(i))
	}
	b.advance(4)
	checkPeek(t, b, 4, 10)
	checkPeek(t, b, 7, 10)
	if b.bytes() <= 0 || b.head() != 4 || b.tail() != 10 {
		t.Fatal(b.head(), b.tail(), b.bytes())
	}
}
