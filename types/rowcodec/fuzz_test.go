package rowcodec

import (
	"errors"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// FuzzDecode checks that decoding arbitrary bytes never panics, fails only
// with ErrCorrupt, and that whatever decodes re-encodes to a payload that
// decodes to the same rows.
func FuzzDecode(f *testing.F) {
	c := mustCodec(f, allTypes)
	e := c.NewEncoder()
	for i := 0; i < 8; i++ {
		_ = e.Append(sampleRow(i))
		f.Add(append([]byte(nil), e.Bytes()...))
	}
	f.Add([]byte{Version, byte(len(allTypes)), 0x3f})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := types.NewBatch(4, len(allTypes))
		n, err := c.Decode(b, data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			if b.Len() != 0 {
				t.Fatalf("failed decode appended %d rows", b.Len())
			}
			return
		}
		if n != b.Len() {
			t.Fatalf("Decode returned %d, batch has %d rows", n, b.Len())
		}
		re := c.NewEncoder()
		if err := re.AppendBatch(b); err != nil {
			t.Fatalf("cannot re-encode decoded rows: %v", err)
		}
		b2 := types.NewBatch(4, len(allTypes))
		if _, err := c.Decode(b2, re.Bytes()); err != nil {
			t.Fatalf("cannot decode re-encoded rows: %v", err)
		}
		if b2.Len() != b.Len() {
			t.Fatalf("re-encoded %d rows, decoded %d", b.Len(), b2.Len())
		}
		for i := range b.Rows {
			sameRow(t, i, b2.Rows[i], b.Rows[i])
		}
	})
}
