package kshuffle

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

func testPayload(t testing.TB, rows int) []byte {
	t.Helper()
	c, err := rowcodec.New(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	e := c.NewEncoder()
	for i := 0; i < rows; i++ {
		if err := e.Append(testRow(0, i, 20)); err != nil {
			t.Fatal(err)
		}
	}
	return append([]byte(nil), e.Bytes()...)
}

func TestCompressRoundTrip(t *testing.T) {
	payload := testPayload(t, 500)
	d := newDecompressor(DefaultMaxPayload)
	defer d.close()
	for _, c := range []Compression{NoCompression, Zstd, LZ4, Snappy} {
		cp, err := newCompressor(c)
		if err != nil {
			t.Fatal(err)
		}
		rec := cp.appendRecord(nil, payload)
		cp.close()
		if c != NoCompression && len(rec) >= len(payload) {
			t.Errorf("%v: %d bytes from %d", c, len(rec), len(payload))
		}
		got, err := d.payload(rec)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("%v: payload changed", c)
		}
	}
	// Incompressible input is sent as it is.
	cp, _ := newCompressor(LZ4)
	if rec := cp.appendRecord(nil, []byte{1}); rec[0] != wireNone || len(rec) != 2 {
		t.Fatalf("tiny LZ4 record = %v", rec)
	}
	// A record larger than the limit is refused.
	small := newDecompressor(100)
	cz, _ := newCompressor(Zstd)
	if _, err := small.payload(cz.appendRecord(nil, payload)); err == nil {
		t.Fatal("payload over MaxPayload: no error")
	}
}

func TestCheckpointEncoding(t *testing.T) {
	cp := Checkpoint{Offset: 1234, Writers: []WriterState{{Watermark: exec.MinWatermark}, {Watermark: 99, Idle: true}, {Watermark: exec.MaxWatermark, Done: true}}}
	b, err := cp.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Checkpoint
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if got.Offset != cp.Offset || len(got.Writers) != 3 || got.Writers[1] != cp.Writers[1] || got.Writers[2] != cp.Writers[2] {
		t.Fatalf("got %+v, want %+v", got, cp)
	}
	for n := 0; n < len(b); n++ {
		if err := got.UnmarshalBinary(b[:n]); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
}

// FuzzRecord feeds arbitrary bytes to what a reader does with a record's
// value and a control header: never a panic, only errors.
func FuzzRecord(f *testing.F) {
	payload := testPayload(f, 20)
	for _, c := range []Compression{NoCompression, Zstd, LZ4, Snappy} {
		cp, _ := newCompressor(c)
		f.Add(cp.appendRecord(nil, payload))
	}
	f.Add(appendControl(nil, control{kind: ctlWatermark, writer: 1, writers: 3, wm: -5}))
	cp, _ := Checkpoint{Offset: 7, Writers: make([]WriterState, 2)}.MarshalBinary()
	f.Add(cp)
	codec, err := rowcodec.New(testSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newDecompressor(1 << 20)
		defer d.close()
		if p, err := d.payload(data); err == nil {
			if _, err := codec.Decode(types.NewBatch(4, len(testSchema)), p); err != nil && !errors.Is(err, rowcodec.ErrCorrupt) {
				t.Fatalf("decode error does not wrap ErrCorrupt: %v", err)
			}
		}
		_, _ = parseControl(data)
		var c Checkpoint
		_ = c.UnmarshalBinary(data)
	})
}
