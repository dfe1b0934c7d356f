package amqptest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"
)

// Frame types and the frame end octet (AMQP 0-9-1, section 4.2.3).
const (
	frameMethod    = 1
	frameHeader    = 2
	frameBody      = 3
	frameHeartbeat = 8
	frameEnd       = 0xCE
)

// protocolHeader opens every AMQP 0-9-1 connection.
var protocolHeader = []byte("AMQP\x00\x00\x09\x01")

// minFrameMax is the smallest frame size a peer must accept.
const minFrameMax = 4096

// frame is one frame read or to be written.
type frame struct {
	typ     byte
	channel uint16
	payload []byte
}

// errFrame is a frame that breaks the protocol's framing: the connection
// closes with 501 FRAME_ERROR.
var errFrame = errors.New("frame error")

// readFrame reads one frame whose payload may be at most max-8 bytes.
func readFrame(r *bufio.Reader, max uint32) (frame, error) {
	var h [7]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	f := frame{typ: h[0], channel: binary.BigEndian.Uint16(h[1:3])}
	size := binary.BigEndian.Uint32(h[3:7])
	if max < minFrameMax {
		max = minFrameMax
	}
	if size > max-8 {
		return frame{}, fmt.Errorf("%w: a frame of %d bytes exceeds the frame-max %d", errFrame, size, max)
	}
	f.payload = make([]byte, size+1)
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return frame{}, err
	}
	if f.payload[size] != frameEnd {
		return frame{}, fmt.Errorf("%w: frame-end octet 0x%02x, not 0xCE", errFrame, f.payload[size])
	}
	f.payload = f.payload[:size]
	switch f.typ {
	case frameMethod, frameHeader, frameBody, frameHeartbeat:
	default:
		return frame{}, fmt.Errorf("%w: unknown frame type %d", errFrame, f.typ)
	}
	return f, nil
}

// appendFrame appends f, framed, to b.
func appendFrame(b []byte, typ byte, channel uint16, payload []byte) []byte {
	b = append(b, typ)
	b = binary.BigEndian.AppendUint16(b, channel)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, payload...)
	return append(b, frameEnd)
}

// methodID is a method's class and method number.
type methodID struct{ class, method uint16 }

func (m methodID) String() string {
	if n, ok := methodNames[m]; ok {
		return n
	}
	return fmt.Sprintf("method %d.%d", m.class, m.method)
}

// Methods the broker reads or writes.
var (
	connStart     = methodID{10, 10}
	connStartOk   = methodID{10, 11}
	connTune      = methodID{10, 30}
	connTuneOk    = methodID{10, 31}
	connOpen      = methodID{10, 40}
	connOpenOk    = methodID{10, 41}
	connClose     = methodID{10, 50}
	connCloseOk   = methodID{10, 51}
	chanOpen      = methodID{20, 10}
	chanOpenOk    = methodID{20, 11}
	chanFlow      = methodID{20, 20}
	chanFlowOk    = methodID{20, 21}
	chanClose     = methodID{20, 40}
	chanCloseOk   = methodID{20, 41}
	exDeclare     = methodID{40, 10}
	exDeclareOk   = methodID{40, 11}
	exDelete      = methodID{40, 20}
	exDeleteOk    = methodID{40, 21}
	qDeclare      = methodID{50, 10}
	qDeclareOk    = methodID{50, 11}
	qBind         = methodID{50, 20}
	qBindOk       = methodID{50, 21}
	qPurge        = methodID{50, 30}
	qPurgeOk      = methodID{50, 31}
	qDelete       = methodID{50, 40}
	qDeleteOk     = methodID{50, 41}
	qUnbind       = methodID{50, 50}
	qUnbindOk     = methodID{50, 51}
	basicQos      = methodID{60, 10}
	basicQosOk    = methodID{60, 11}
	basicConsume  = methodID{60, 20}
	basicConsOk   = methodID{60, 21}
	basicCancel   = methodID{60, 30}
	basicCancelOk = methodID{60, 31}
	basicPublish  = methodID{60, 40}
	basicReturn   = methodID{60, 50}
	basicDeliver  = methodID{60, 60}
	basicGet      = methodID{60, 70}
	basicGetOk    = methodID{60, 71}
	basicGetEmpty = methodID{60, 72}
	basicAck      = methodID{60, 80}
	basicReject   = methodID{60, 90}
	basicRecover  = methodID{60, 110}
	basicRecovOk  = methodID{60, 111}
	basicNack     = methodID{60, 120}
	confSelect    = methodID{85, 10}
	confSelectOk  = methodID{85, 11}
)

// methodArgs gives each method's argument list: o octet, h short, l long,
// L long long, s short string, S long string, b bit (consecutive bits
// share octets), T field table.
var methodArgs = map[methodID]string{
	connStart: "ooTSS", connStartOk: "TsSs", connTune: "hlh", connTuneOk: "hlh",
	connOpen: "ssb", connOpenOk: "s", connClose: "hshh", connCloseOk: "",
	chanOpen: "s", chanOpenOk: "S", chanFlow: "b", chanFlowOk: "b", chanClose: "hshh", chanCloseOk: "",
	exDeclare: "hssbbbbbT", exDeclareOk: "", exDelete: "hsbb", exDeleteOk: "",
	qDeclare: "hsbbbbbT", qDeclareOk: "sll", qBind: "hsssbT", qBindOk: "", qPurge: "hsb", qPurgeOk: "l",
	qDelete: "hsbbb", qDeleteOk: "l", qUnbind: "hsssT", qUnbindOk: "",
	basicQos: "lhb", basicQosOk: "", basicConsume: "hssbbbbT", basicConsOk: "s", basicCancel: "sb",
	basicCancelOk: "s", basicPublish: "hssbb", basicReturn: "hsss", basicDeliver: "sLbss",
	basicGet: "hsb", basicGetOk: "Lbssl", basicGetEmpty: "s", basicAck: "Lb", basicReject: "Lb",
	basicRecover: "b", basicRecovOk: "", basicNack: "Lbb", confSelect: "b", confSelectOk: "",
}

var methodNames = map[methodID]string{
	connStart: "connection.start", connStartOk: "connection.start-ok", connTune: "connection.tune",
	connTuneOk: "connection.tune-ok", connOpen: "connection.open", connOpenOk: "connection.open-ok",
	connClose: "connection.close", connCloseOk: "connection.close-ok", chanOpen: "channel.open",
	chanOpenOk: "channel.open-ok", chanFlow: "channel.flow", chanFlowOk: "channel.flow-ok",
	chanClose: "channel.close", chanCloseOk: "channel.close-ok", exDeclare: "exchange.declare",
	exDeclareOk: "exchange.declare-ok", exDelete: "exchange.delete", exDeleteOk: "exchange.delete-ok",
	qDeclare: "queue.declare", qDeclareOk: "queue.declare-ok", qBind: "queue.bind", qBindOk: "queue.bind-ok",
	qPurge: "queue.purge", qPurgeOk: "queue.purge-ok", qDelete: "queue.delete", qDeleteOk: "queue.delete-ok",
	qUnbind: "queue.unbind", qUnbindOk: "queue.unbind-ok", basicQos: "basic.qos", basicQosOk: "basic.qos-ok",
	basicConsume: "basic.consume", basicConsOk: "basic.consume-ok", basicCancel: "basic.cancel",
	basicCancelOk: "basic.cancel-ok", basicPublish: "basic.publish", basicReturn: "basic.return",
	basicDeliver: "basic.deliver", basicGet: "basic.get", basicGetOk: "basic.get-ok",
	basicGetEmpty: "basic.get-empty", basicAck: "basic.ack", basicReject: "basic.reject",
	basicRecover: "basic.recover", basicRecovOk: "basic.recover-ok", basicNack: "basic.nack",
	confSelect: "confirm.select", confSelectOk: "confirm.select-ok",
}

// hasContent reports whether a method is followed by a content header and
// body frames.
func hasContent(m methodID) bool {
	return m == basicPublish || m == basicReturn || m == basicDeliver || m == basicGetOk
}

// Table is an AMQP field table. Values are bool, int8, uint8, int16,
// uint16, int32, uint32, int64, float32, float64, string, []byte,
// time.Time, Decimal, []any, Table or nil.
type Table map[string]any

// Decimal is a field table's decimal value: Value / 10^Scale.
type Decimal struct {
	Scale uint8
	Value int32
}

// decoder reads the fields of a payload; the first error sticks.
type decoder struct {
	b    []byte
	err  error
	bits byte // the octet bits are being read from
	nbit int  // how many of its bits were read (0: none pending)
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) take(n int) []byte {
	d.nbit = 0
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b) < n {
		d.fail("%d bytes short", n-len(d.b))
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) octet() byte {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) short() uint16 {
	if b := d.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) long() uint32 {
	if b := d.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) longlong() uint64 {
	if b := d.take(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) shortstr() string { return string(d.take(int(d.octet()))) }

func (d *decoder) longstr() []byte {
	n := d.long()
	if uint64(n) > uint64(len(d.b)) {
		d.fail("a long string of %d bytes with %d left", n, len(d.b))
		return nil
	}
	return d.take(int(n))
}

func (d *decoder) bit() bool {
	if d.nbit == 0 || d.nbit == 8 {
		d.bits = d.octet()
		d.nbit = 0
	}
	v := d.bits&(1<<d.nbit) != 0
	d.nbit++
	return v
}

// maxDepth bounds the nesting of tables and arrays.
const maxDepth = 16

func (d *decoder) table(depth int) Table {
	raw := d.longstr()
	if d.err != nil {
		return nil
	}
	if depth > maxDepth {
		d.fail("field tables nested too deep")
		return nil
	}
	sub := decoder{b: raw}
	t := Table{}
	for len(sub.b) > 0 && sub.err == nil {
		k := sub.shortstr()
		t[k] = sub.value(depth)
	}
	if sub.err != nil {
		d.fail("field table: %v", sub.err)
		return nil
	}
	return t
}

func (d *decoder) value(depth int) any {
	switch typ := d.octet(); typ {
	case 't':
		return d.octet() != 0
	case 'b':
		return int8(d.octet())
	case 'B':
		return d.octet()
	case 's':
		return int16(d.short())
	case 'u':
		return d.short()
	case 'I':
		return int32(d.long())
	case 'i':
		return d.long()
	case 'l':
		return int64(d.longlong())
	case 'f':
		return math.Float32frombits(d.long())
	case 'd':
		return math.Float64frombits(d.longlong())
	case 'D':
		return Decimal{Scale: d.octet(), Value: int32(d.long())}
	case 'S':
		return string(d.longstr())
	case 'x':
		return append([]byte(nil), d.longstr()...)
	case 'T':
		return time.Unix(int64(d.longlong()), 0).UTC()
	case 'F':
		return d.table(depth + 1)
	case 'A':
		raw := d.longstr()
		if depth > maxDepth {
			d.fail("field arrays nested too deep")
			return nil
		}
		sub := decoder{b: raw}
		var a []any
		for len(sub.b) > 0 && sub.err == nil {
			a = append(a, sub.value(depth+1))
		}
		if sub.err != nil {
			d.fail("field array: %v", sub.err)
		}
		return a
	case 'V':
		return nil
	default:
		d.fail("unknown field value type %q", typ)
		return nil
	}
}

// decodeMethod decodes a method frame's payload: the method and its
// arguments, as methodArgs lists them (octet byte, short uint16, long
// uint32, long long uint64, strings string, bit bool, table Table).
func decodeMethod(p []byte) (methodID, []any, error) {
	d := decoder{b: p}
	id := methodID{d.short(), d.short()}
	if d.err != nil {
		return id, nil, fmt.Errorf("a method frame of %d bytes", len(p))
	}
	spec, ok := methodArgs[id]
	if !ok {
		return id, nil, fmt.Errorf("unknown %s", id)
	}
	args := make([]any, 0, len(spec))
	for _, c := range spec {
		switch c {
		case 'o':
			args = append(args, d.octet())
		case 'h':
			args = append(args, d.short())
		case 'l':
			args = append(args, d.long())
		case 'L':
			args = append(args, d.longlong())
		case 's':
			args = append(args, d.shortstr())
		case 'S':
			args = append(args, string(d.longstr()))
		case 'b':
			args = append(args, d.bit())
		case 'T':
			args = append(args, d.table(0))
		}
	}
	if d.err != nil {
		return id, nil, fmt.Errorf("%s: %v", id, d.err)
	}
	return id, args, nil
}

// encoder appends fields to b.
type encoder struct {
	b     []byte
	bitAt int // index of the octet bits go into; -1: none open
	nbit  int
}

func (e *encoder) octet(v byte)   { e.bitAt = -1; e.b = append(e.b, v) }
func (e *encoder) short(v uint16) { e.bitAt = -1; e.b = binary.BigEndian.AppendUint16(e.b, v) }
func (e *encoder) long(v uint32)  { e.bitAt = -1; e.b = binary.BigEndian.AppendUint32(e.b, v) }
func (e *encoder) longlong(v uint64) {
	e.bitAt = -1
	e.b = binary.BigEndian.AppendUint64(e.b, v)
}

func (e *encoder) shortstr(s string) {
	if len(s) > 255 {
		s = s[:255]
	}
	e.octet(byte(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) longstr(s []byte) {
	e.long(uint32(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) bit(v bool) {
	if e.bitAt < 0 || e.nbit == 8 {
		e.b = append(e.b, 0)
		e.bitAt, e.nbit = len(e.b)-1, 0
	}
	if v {
		e.b[e.bitAt] |= 1 << e.nbit
	}
	e.nbit++
}

func (e *encoder) table(t Table) {
	var sub encoder
	sub.bitAt = -1
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub.shortstr(k)
		sub.value(t[k])
	}
	e.longstr(sub.b)
}

func (e *encoder) value(v any) {
	switch v := v.(type) {
	case bool:
		e.octet('t')
		if v {
			e.octet(1)
		} else {
			e.octet(0)
		}
	case int8:
		e.octet('b')
		e.octet(byte(v))
	case uint8:
		e.octet('B')
		e.octet(v)
	case int16:
		e.octet('s')
		e.short(uint16(v))
	case uint16:
		e.octet('u')
		e.short(v)
	case int32:
		e.octet('I')
		e.long(uint32(v))
	case uint32:
		e.octet('i')
		e.long(v)
	case int:
		e.octet('l')
		e.longlong(uint64(v))
	case int64:
		e.octet('l')
		e.longlong(uint64(v))
	case float32:
		e.octet('f')
		e.long(math.Float32bits(v))
	case float64:
		e.octet('d')
		e.longlong(math.Float64bits(v))
	case Decimal:
		e.octet('D')
		e.octet(v.Scale)
		e.long(uint32(v.Value))
	case string:
		e.octet('S')
		e.longstr([]byte(v))
	case []byte:
		e.octet('x')
		e.longstr(v)
	case time.Time:
		e.octet('T')
		e.longlong(uint64(v.Unix()))
	case Table:
		e.octet('F')
		e.table(v)
	case map[string]any:
		e.octet('F')
		e.table(Table(v))
	case []any:
		var sub encoder
		sub.bitAt = -1
		for _, x := range v {
			sub.value(x)
		}
		e.octet('A')
		e.longstr(sub.b)
	default:
		e.octet('V')
	}
}

// encodeMethod encodes a method frame's payload.
func encodeMethod(id methodID, args ...any) []byte {
	e := encoder{bitAt: -1}
	e.short(id.class)
	e.short(id.method)
	spec := methodArgs[id]
	if len(spec) != len(args) {
		panic(fmt.Sprintf("amqptest: %s takes %d arguments, not %d", id, len(spec), len(args)))
	}
	for i, c := range spec {
		switch c {
		case 'o':
			e.octet(args[i].(byte))
		case 'h':
			e.short(args[i].(uint16))
		case 'l':
			e.long(args[i].(uint32))
		case 'L':
			e.longlong(args[i].(uint64))
		case 's':
			e.shortstr(args[i].(string))
		case 'S':
			e.longstr([]byte(args[i].(string)))
		case 'b':
			e.bit(args[i].(bool))
		case 'T':
			t, _ := args[i].(Table)
			e.table(t)
		}
	}
	return e.b
}

// Properties are a message's basic properties; the zero value of each
// field means absent.
type Properties struct {
	ContentType     string
	ContentEncoding string
	Headers         Table
	DeliveryMode    uint8 // 1 transient, 2 persistent
	Priority        uint8
	CorrelationID   string
	ReplyTo         string
	Expiration      string
	MessageID       string
	Timestamp       time.Time
	Type            string
	UserID          string
	AppID           string
}

// Property flags of the basic class, highest bit first.
const (
	flagContentType     = 0x8000
	flagContentEncoding = 0x4000
	flagHeaders         = 0x2000
	flagDeliveryMode    = 0x1000
	flagPriority        = 0x0800
	flagCorrelationID   = 0x0400
	flagReplyTo         = 0x0200
	flagExpiration      = 0x0100
	flagMessageID       = 0x0080
	flagTimestamp       = 0x0040
	flagType            = 0x0020
	flagUserID          = 0x0010
	flagAppID           = 0x0008
	flagReserved        = 0x0004
)

// header is a decoded content header frame.
type header struct {
	class    uint16
	bodySize uint64
	props    Properties
}

// decodeHeader decodes a content header frame's payload.
func decodeHeader(p []byte) (header, error) {
	d := decoder{b: p}
	var h header
	h.class = d.short()
	d.short() // weight
	h.bodySize = d.longlong()
	flags := d.short()
	if d.err != nil {
		return h, fmt.Errorf("content header: %v", d.err)
	}
	if flags&1 != 0 {
		return h, errors.New("content header: continued property flags are not supported")
	}
	pr := &h.props
	if flags&flagContentType != 0 {
		pr.ContentType = d.shortstr()
	}
	if flags&flagContentEncoding != 0 {
		pr.ContentEncoding = d.shortstr()
	}
	if flags&flagHeaders != 0 {
		pr.Headers = d.table(0)
	}
	if flags&flagDeliveryMode != 0 {
		pr.DeliveryMode = d.octet()
	}
	if flags&flagPriority != 0 {
		pr.Priority = d.octet()
	}
	if flags&flagCorrelationID != 0 {
		pr.CorrelationID = d.shortstr()
	}
	if flags&flagReplyTo != 0 {
		pr.ReplyTo = d.shortstr()
	}
	if flags&flagExpiration != 0 {
		pr.Expiration = d.shortstr()
	}
	if flags&flagMessageID != 0 {
		pr.MessageID = d.shortstr()
	}
	if flags&flagTimestamp != 0 {
		pr.Timestamp = time.Unix(int64(d.longlong()), 0).UTC()
	}
	if flags&flagType != 0 {
		pr.Type = d.shortstr()
	}
	if flags&flagUserID != 0 {
		pr.UserID = d.shortstr()
	}
	if flags&flagAppID != 0 {
		pr.AppID = d.shortstr()
	}
	if flags&flagReserved != 0 {
		d.shortstr()
	}
	if d.err != nil {
		return h, fmt.Errorf("content header: %v", d.err)
	}
	return h, nil
}

// encodeHeader encodes a content header frame's payload.
func encodeHeader(bodySize uint64, pr Properties) []byte {
	e := encoder{bitAt: -1}
	e.short(60)
	e.short(0)
	e.longlong(bodySize)
	var flags uint16
	body := encoder{bitAt: -1}
	if pr.ContentType != "" {
		flags |= flagContentType
		body.shortstr(pr.ContentType)
	}
	if pr.ContentEncoding != "" {
		flags |= flagContentEncoding
		body.shortstr(pr.ContentEncoding)
	}
	if pr.Headers != nil {
		flags |= flagHeaders
		body.table(pr.Headers)
	}
	if pr.DeliveryMode != 0 {
		flags |= flagDeliveryMode
		body.octet(pr.DeliveryMode)
	}
	if pr.Priority != 0 {
		flags |= flagPriority
		body.octet(pr.Priority)
	}
	if pr.CorrelationID != "" {
		flags |= flagCorrelationID
		body.shortstr(pr.CorrelationID)
	}
	if pr.ReplyTo != "" {
		flags |= flagReplyTo
		body.shortstr(pr.ReplyTo)
	}
	if pr.Expiration != "" {
		flags |= flagExpiration
		body.shortstr(pr.Expiration)
	}
	if pr.MessageID != "" {
		flags |= flagMessageID
		body.shortstr(pr.MessageID)
	}
	if !pr.Timestamp.IsZero() {
		flags |= flagTimestamp
		body.longlong(uint64(pr.Timestamp.Unix()))
	}
	if pr.Type != "" {
		flags |= flagType
		body.shortstr(pr.Type)
	}
	if pr.UserID != "" {
		flags |= flagUserID
		body.shortstr(pr.UserID)
	}
	if pr.AppID != "" {
		flags |= flagAppID
		body.shortstr(pr.AppID)
	}
	e.short(flags)
	return append(e.b, body.b...)
}
