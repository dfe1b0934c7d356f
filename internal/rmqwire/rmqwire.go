// Package rmqwire carries the RocketMQ v2 gRPC calls that the generated
// package of the v5 Go client (github.com/apache/rocketmq-clients/golang/
// v5/protocol/v2) predates: PullMessage, which reads a message queue from
// an offset, and QueryOffset, which finds an offset by position or time.
// Both are in apache/rocketmq-apis' service.proto (MessagingService), and
// RocketMQ's proxy serves them; their messages are encoded here by hand,
// field by field as that file numbers them, and the messages they embed
// (Resource, MessageQueue, Message, Status, FilterExpression) with the
// client's generated types.
//
// A call goes over any grpc.ClientConn with grpc.ForceCodec(Codec{}); a
// server that serves them takes grpc.ForceServerCodec(Codec{}), which
// encodes generated messages as the default codec does.
package rmqwire

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ServiceName is the gRPC service of RocketMQ's v2 messaging API.
const ServiceName = "apache.rocketmq.v2.MessagingService"

// Full method names.
const (
	PullMessageMethod = "/" + ServiceName + "/PullMessage"
	QueryOffsetMethod = "/" + ServiceName + "/QueryOffset"
)

// Query offset policies (enum QueryOffsetPolicy).
const (
	PolicyBeginning = 0
	PolicyEnd       = 1
	PolicyTimestamp = 2
)

// wireMessage is a message this package encodes by hand.
type wireMessage interface {
	marshal() ([]byte, error)
	unmarshal([]byte) error
}

// Codec is a gRPC codec for this package's messages and the generated ones.
type Codec struct{}

// Name implements encoding.Codec.
func (Codec) Name() string { return "proto" }

// Marshal implements encoding.Codec.
func (Codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case wireMessage:
		return m.marshal()
	case proto.Message:
		return proto.Marshal(m)
	case protoadapt.MessageV1:
		return proto.Marshal(protoadapt.MessageV2Of(m))
	}
	return nil, fmt.Errorf("rmqwire: cannot marshal %T", v)
}

// Unmarshal implements encoding.Codec.
func (Codec) Unmarshal(b []byte, v any) error {
	switch m := v.(type) {
	case wireMessage:
		return m.unmarshal(b)
	case proto.Message:
		return proto.Unmarshal(b, m)
	case protoadapt.MessageV1:
		return proto.Unmarshal(b, protoadapt.MessageV2Of(m))
	}
	return fmt.Errorf("rmqwire: cannot unmarshal into %T", v)
}

// PullMessageRequest asks for the messages of a queue from an offset.
type PullMessageRequest struct {
	Group              *v2.Resource         // 1
	MessageQueue       *v2.MessageQueue     // 2
	Offset             int64                // 3
	BatchSize          int32                // 4
	FilterExpression   *v2.FilterExpression // 5
	LongPollingTimeout time.Duration        // 6, 0: absent
}

// PullMessageResponse is one frame of the answer: a status, a message or
// the offset to pull from next (a oneof).
type PullMessageResponse struct {
	Status        *v2.Status  // 1
	Message       *v2.Message // 2
	NextOffset    int64       // 3
	HasNextOffset bool
}

// QueryOffsetRequest asks for an offset of a queue.
type QueryOffsetRequest struct {
	MessageQueue *v2.MessageQueue // 1
	Policy       int32            // 2
	Timestamp    *time.Time       // 3, with PolicyTimestamp
}

// QueryOffsetResponse is QueryOffset's answer.
type QueryOffsetResponse struct {
	Status *v2.Status // 1
	Offset int64      // 2
}

func appendMessage(b []byte, num protowire.Number, m proto.Message) ([]byte, error) {
	if m == nil {
		return b, nil
	}
	e, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, e), nil
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// fields calls f for each field of b; f returns how much of the value it
// consumed, or a negative protowire error code.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, b []byte) (int, error)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		m, err := f(num, typ, b)
		if err != nil {
			return err
		}
		if m < 0 {
			m = protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return protowire.ParseError(m)
			}
		}
		b = b[m:]
	}
	return nil
}

// bytesField decodes a length-delimited value into m.
func bytesField(typ protowire.Type, b []byte, m proto.Message) (int, error) {
	if typ != protowire.BytesType {
		return 0, errors.New("rmqwire: wrong wire type")
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	return n, proto.Unmarshal(v, m)
}

func varintField(typ protowire.Type, b []byte) (uint64, int, error) {
	if typ != protowire.VarintType {
		return 0, 0, errors.New("rmqwire: wrong wire type")
	}
	v, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return 0, 0, protowire.ParseError(n)
	}
	return v, n, nil
}

func (r *PullMessageRequest) marshal() ([]byte, error) {
	var b []byte
	var err error
	if b, err = appendMessage(b, 1, r.Group); err != nil {
		return nil, err
	}
	if b, err = appendMessage(b, 2, r.MessageQueue); err != nil {
		return nil, err
	}
	b = appendVarint(b, 3, uint64(r.Offset))
	b = appendVarint(b, 4, uint64(int64(r.BatchSize)))
	if b, err = appendMessage(b, 5, r.FilterExpression); err != nil {
		return nil, err
	}
	if r.LongPollingTimeout > 0 {
		if b, err = appendMessage(b, 6, durationpb.New(r.LongPollingTimeout)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (r *PullMessageRequest) unmarshal(b []byte) error {
	*r = PullMessageRequest{}
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			r.Group = &v2.Resource{}
			return bytesField(typ, b, r.Group)
		case 2:
			r.MessageQueue = &v2.MessageQueue{}
			return bytesField(typ, b, r.MessageQueue)
		case 3:
			v, n, err := varintField(typ, b)
			r.Offset = int64(v)
			return n, err
		case 4:
			v, n, err := varintField(typ, b)
			r.BatchSize = int32(v)
			return n, err
		case 5:
			r.FilterExpression = &v2.FilterExpression{}
			return bytesField(typ, b, r.FilterExpression)
		case 6:
			d := &durationpb.Duration{}
			n, err := bytesField(typ, b, d)
			r.LongPollingTimeout = d.AsDuration()
			return n, err
		}
		return -1, nil
	})
}

func (r *PullMessageResponse) marshal() ([]byte, error) {
	switch {
	case r.Status != nil:
		return appendMessage(nil, 1, r.Status)
	case r.Message != nil:
		return appendMessage(nil, 2, r.Message)
	case r.HasNextOffset:
		b := protowire.AppendTag(nil, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(r.NextOffset)), nil
	}
	return nil, nil
}

func (r *PullMessageResponse) unmarshal(b []byte) error {
	*r = PullMessageResponse{}
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			r.Status = &v2.Status{}
			return bytesField(typ, b, r.Status)
		case 2:
			r.Message = &v2.Message{}
			return bytesField(typ, b, r.Message)
		case 3:
			v, n, err := varintField(typ, b)
			r.NextOffset, r.HasNextOffset = int64(v), true
			return n, err
		}
		return -1, nil
	})
}

func (r *QueryOffsetRequest) marshal() ([]byte, error) {
	b, err := appendMessage(nil, 1, r.MessageQueue)
	if err != nil {
		return nil, err
	}
	b = appendVarint(b, 2, uint64(int64(r.Policy)))
	if r.Timestamp != nil {
		if b, err = appendMessage(b, 3, timestamppb.New(*r.Timestamp)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (r *QueryOffsetRequest) unmarshal(b []byte) error {
	*r = QueryOffsetRequest{}
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			r.MessageQueue = &v2.MessageQueue{}
			return bytesField(typ, b, r.MessageQueue)
		case 2:
			v, n, err := varintField(typ, b)
			r.Policy = int32(v)
			return n, err
		case 3:
			ts := &timestamppb.Timestamp{}
			n, err := bytesField(typ, b, ts)
			t := ts.AsTime()
			r.Timestamp = &t
			return n, err
		}
		return -1, nil
	})
}

func (r *QueryOffsetResponse) marshal() ([]byte, error) {
	b, err := appendMessage(nil, 1, r.Status)
	if err != nil {
		return nil, err
	}
	return appendVarint(b, 2, uint64(r.Offset)), nil
}

func (r *QueryOffsetResponse) unmarshal(b []byte) error {
	*r = QueryOffsetResponse{}
	return fields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			r.Status = &v2.Status{}
			return bytesField(typ, b, r.Status)
		case 2:
			v, n, err := varintField(typ, b)
			r.Offset = int64(v)
			return n, err
		}
		return -1, nil
	})
}

// PullMessage calls PullMessage and returns the frames of the answer.
func PullMessage(ctx context.Context, cc grpc.ClientConnInterface, req *PullMessageRequest, opts ...grpc.CallOption) ([]PullMessageResponse, error) {
	desc := &grpc.StreamDesc{StreamName: "PullMessage", ServerStreams: true}
	st, err := cc.NewStream(ctx, desc, PullMessageMethod, append(opts, grpc.ForceCodec(Codec{}))...)
	if err != nil {
		return nil, err
	}
	if err := st.SendMsg(req); err != nil {
		return nil, err
	}
	if err := st.CloseSend(); err != nil {
		return nil, err
	}
	var out []PullMessageResponse
	for {
		var r PullMessageResponse
		if err := st.RecvMsg(&r); err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, r)
	}
}

// QueryOffset calls QueryOffset.
func QueryOffset(ctx context.Context, cc grpc.ClientConnInterface, req *QueryOffsetRequest, opts ...grpc.CallOption) (*QueryOffsetResponse, error) {
	out := &QueryOffsetResponse{}
	if err := cc.Invoke(ctx, QueryOffsetMethod, req, out, append(opts, grpc.ForceCodec(Codec{}))...); err != nil {
		return nil, err
	}
	return out, nil
}

// Server is what serves the calls of this package.
type Server interface {
	PullMessage(ctx context.Context, req *PullMessageRequest, send func(*PullMessageResponse) error) error
	QueryOffset(ctx context.Context, req *QueryOffsetRequest) (*QueryOffsetResponse, error)
}

// ServiceDesc returns base (the generated MessagingService's description)
// with this package's calls added, served by srv. A gRPC server takes one
// description per service name, so the calls go into one.
func ServiceDesc(base grpc.ServiceDesc, srv Server) grpc.ServiceDesc {
	d := base
	d.Methods = append(append([]grpc.MethodDesc(nil), base.Methods...), grpc.MethodDesc{
		MethodName: "QueryOffset",
		Handler: func(_ any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			req := &QueryOffsetRequest{}
			if err := dec(req); err != nil {
				return nil, err
			}
			if icpt == nil {
				return srv.QueryOffset(ctx, req)
			}
			info := &grpc.UnaryServerInfo{Server: srv, FullMethod: QueryOffsetMethod}
			return icpt(ctx, req, info, func(ctx context.Context, r any) (any, error) {
				return srv.QueryOffset(ctx, r.(*QueryOffsetRequest))
			})
		},
	})
	d.Streams = append(append([]grpc.StreamDesc(nil), base.Streams...), grpc.StreamDesc{
		StreamName:    "PullMessage",
		ServerStreams: true,
		Handler: func(_ any, st grpc.ServerStream) error {
			req := &PullMessageRequest{}
			if err := st.RecvMsg(req); err != nil {
				return err
			}
			return srv.PullMessage(st.Context(), req, func(r *PullMessageResponse) error { return st.SendMsg(r) })
		},
	})
	return d
}

// Dial connects to a RocketMQ gRPC endpoint (host:port) as the v5 Go
// client does: over TLS, without verifying the server's certificate. The
// connection is made on first use.
func Dial(target string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	creds := credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // as the v5 client
	return grpc.Dial(target, append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, opts...)...)
}

// Identity is who a call comes from: the metadata a v5 client signs its
// calls with.
type Identity struct {
	ClientID  string
	Namespace string
	AccessKey string
	Secret    string
}

// Sign returns ctx with the metadata of a call from id: the client and
// its namespace, and the access key's HMAC-SHA1 signature of the time.
func (id Identity) Sign(ctx context.Context) context.Context {
	now := time.Now().UTC().Format("20060102T150405Z")
	h := hmac.New(sha1.New, []byte(id.Secret))
	h.Write([]byte(now))
	return metadata.AppendToOutgoingContext(ctx,
		"x-mq-language", "GO",
		"x-mq-protocol", "v2",
		"x-mq-client-version", "5.1.2",
		"x-mq-request-id", strconv.FormatInt(requestID.Add(1), 10),
		"x-mq-client-id", id.ClientID,
		"x-mq-namespace", id.Namespace,
		"x-mq-date-time", now,
		"authorization", "MQv2-HMAC-SHA1 Credential="+id.AccessKey+"//Rocketmq, SignedHeaders=x-mq-date-time, Signature="+hex.EncodeToString(h.Sum(nil)))
}

var requestID atomic.Int64
