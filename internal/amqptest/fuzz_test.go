package amqptest

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzReadFrame feeds what a client might send to the frame reader and the
// method and content header decoders: they must return values or errors,
// never panic or read past what they were given.
func FuzzReadFrame(f *testing.F) {
	var seed []byte
	seed = appendFrame(seed, frameMethod, 0, encodeMethod(connStartOk, Table{"product": "x", "capabilities": Table{"basic.nack": true}}, "PLAIN", "\x00guest\x00guest", "en_US"))
	seed = appendFrame(seed, frameMethod, 1, encodeMethod(qDeclare, uint16(0), "q", false, true, false, false, false, Table{"x-max-length": int32(5), "a": []any{int64(1), "s", 1.5}}))
	seed = appendFrame(seed, frameMethod, 1, encodeMethod(basicPublish, uint16(0), "ex", "rk", true, false))
	seed = appendFrame(seed, frameHeader, 1, encodeHeader(3, Properties{ContentType: "text/plain", DeliveryMode: 2, Headers: Table{"k": "v"}, MessageID: "m"}))
	seed = appendFrame(seed, frameBody, 1, []byte("abc"))
	seed = appendFrame(seed, frameMethod, 1, encodeMethod(basicNack, uint64(7), true, false))
	f.Add(seed)
	f.Add(appendFrame(nil, frameHeartbeat, 0, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for range 32 {
			fr, err := readFrame(r, 131072)
			if err != nil {
				return
			}
			switch fr.typ {
			case frameMethod:
				if id, args, err := decodeMethod(fr.payload); err == nil && len(args) != len(methodArgs[id]) {
					t.Fatalf("%s: %d arguments, want %d", id, len(args), len(methodArgs[id]))
				}
			case frameHeader:
				decodeHeader(fr.payload)
			}
		}
	})
}
