package rmqwire

import (
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// TestRoundTrip encodes every message and decodes it back.
func TestRoundTrip(t *testing.T) {
	mq := &v2.MessageQueue{Topic: &v2.Resource{ResourceNamespace: "ns", Name: "t"}, Id: 3}
	req := &PullMessageRequest{Group: &v2.Resource{Name: "g"}, MessageQueue: mq, Offset: 1 << 40, BatchSize: 32,
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "a || b"}, LongPollingTimeout: 1500 * time.Millisecond}
	b, err := Codec{}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var got PullMessageRequest
	if err := (Codec{}).Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got.Group, req.Group) || !proto.Equal(got.MessageQueue, mq) || got.Offset != req.Offset || got.BatchSize != 32 ||
		!proto.Equal(got.FilterExpression, req.FilterExpression) || got.LongPollingTimeout != req.LongPollingTimeout {
		t.Errorf("got %+v, want %+v", got, req)
	}
	for _, r := range []*PullMessageResponse{
		{Status: &v2.Status{Code: v2.Code_OK, Message: "ok"}},
		{Message: &v2.Message{Topic: &v2.Resource{Name: "t"}, Body: []byte("x")}},
		{NextOffset: 7, HasNextOffset: true},
		{NextOffset: 0, HasNextOffset: true},
	} {
		b, err := Codec{}.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var g PullMessageResponse
		if err := (Codec{}).Unmarshal(b, &g); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(g.Status, r.Status) || !proto.Equal(g.Message, r.Message) || g.NextOffset != r.NextOffset || g.HasNextOffset != r.HasNextOffset {
			t.Errorf("got %+v, want %+v", g, r)
		}
	}
	at := time.UnixMilli(1700000000123).UTC()
	q := &QueryOffsetRequest{MessageQueue: mq, Policy: PolicyTimestamp, Timestamp: &at}
	b, _ = Codec{}.Marshal(q)
	var gq QueryOffsetRequest
	if err := (Codec{}).Unmarshal(b, &gq); err != nil || gq.Policy != PolicyTimestamp || !gq.Timestamp.Equal(at) || !proto.Equal(gq.MessageQueue, mq) {
		t.Errorf("got %+v (%v), want %+v", gq, err, q)
	}
	qr := &QueryOffsetResponse{Status: &v2.Status{Code: v2.Code_OK}, Offset: 42}
	b, _ = Codec{}.Marshal(qr)
	var gr QueryOffsetResponse
	if err := (Codec{}).Unmarshal(b, &gr); err != nil || gr.Offset != 42 || gr.Status.GetCode() != v2.Code_OK {
		t.Errorf("got %+v (%v)", gr, err)
	}
}

// TestUnknownAndBadFields skips fields it does not know and refuses
// malformed input.
func TestUnknownAndBadFields(t *testing.T) {
	b := protowire.AppendTag(nil, 99, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte("future"))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, 5)
	var r QueryOffsetResponse
	if err := r.unmarshal(b); err != nil || r.Offset != 5 {
		t.Errorf("got %+v, %v", r, err)
	}
	for _, bad := range [][]byte{{0xff}, {0x0a, 0x05, 0x01}, protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)} {
		if err := r.unmarshal(bad); err == nil {
			t.Errorf("%x: no error", bad)
		}
	}
}
