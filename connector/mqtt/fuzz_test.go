package mqtt

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
)

// FuzzReadPacket feeds what a broker might send to the packet reader: it
// must return packets or errors, never panic or hang.
func FuzzReadPacket(f *testing.F) {
	for _, v := range []byte{4, 5} {
		var b bytes.Buffer
		pk := packets.Packet{ProtocolVersion: v, TopicName: "a/b", Payload: []byte("x"), PacketID: 7,
			FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}}
		if v == 5 {
			pk.Properties.User = []packets.UserProperty{{Key: "k", Val: "v"}}
			pk.Properties.ContentType = "text/plain"
		}
		pk.PublishEncode(&b)
		ack := packets.Packet{ProtocolVersion: v, FixedHeader: packets.FixedHeader{Type: packets.Connack}}
		ack.ConnackEncode(&b)
		sub := packets.Packet{ProtocolVersion: v, PacketID: 3, ReasonCodes: []byte{1, 0x80}, FixedHeader: packets.FixedHeader{Type: packets.Suback}}
		sub.SubackEncode(&b)
		f.Add(v == 5, b.Bytes())
	}
	f.Fuzz(func(t *testing.T, v5 bool, data []byte) {
		version := byte(4)
		if v5 {
			version = 5
		}
		r := bufio.NewReader(bytes.NewReader(data))
		for range 16 {
			if _, err := safeRead(r, version); err != nil {
				return
			}
		}
	})
}
