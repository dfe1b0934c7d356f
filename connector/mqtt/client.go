package mqtt

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/sluicesql/sluice/connector"
)

// maxPacket bounds the size of a packet the client reads (MQTT allows
// 256 MiB; a larger length is a broken stream).
const maxPacket = 256 << 20

// errConnLost is what an outbound publish waiting for its acknowledgement
// gets when the connection ends first.
var errConnLost = errors.New("connection lost before the broker acknowledged the message")

// refusedError is a CONNACK that refused the connection.
type refusedError struct {
	code   byte
	reason string
	// permanent: trying again will not help (bad credentials, not
	// authorized, protocol version or client identifier refused).
	permanent bool
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("the broker refused the connection: %s (code 0x%02x)", e.reason, e.code)
}

// connackError interprets a CONNACK's return (3.1.1) or reason (5) code.
func connackError(version, code byte) error {
	if code == 0 {
		return nil
	}
	if version < 5 {
		switch code {
		case 1:
			return &refusedError{code, "unacceptable protocol version: the broker does not speak MQTT 3.1.1 ('protocol-version' = '5'?)", true}
		case 2:
			return &refusedError{code, "client identifier rejected ('client-id')", true}
		case 3:
			return &refusedError{code, "server unavailable", false}
		case 4:
			return &refusedError{code, "bad user name or password ('username', 'password')", true}
		case 5:
			return &refusedError{code, "not authorized", true}
		}
		return &refusedError{code, "unknown return code", true}
	}
	switch code {
	case 0x84:
		return &refusedError{code, "unsupported protocol version: the broker does not speak MQTT 5 ('protocol-version' = '3.1.1'?)", true}
	case 0x85:
		return &refusedError{code, "client identifier not valid ('client-id')", true}
	case 0x86:
		return &refusedError{code, "bad user name or password ('username', 'password')", true}
	case 0x87:
		return &refusedError{code, "not authorized", true}
	case 0x8A:
		return &refusedError{code, "banned", true}
	case 0x8C:
		return &refusedError{code, "bad authentication method", true}
	case 0x88, 0x89, 0x9F:
		return &refusedError{code, reasonText(code), false}
	}
	return &refusedError{code, reasonText(code), code < 0x80}
}

// reasonText names an MQTT 5 reason code.
func reasonText(code byte) string {
	switch code {
	case 0x80:
		return "unspecified error"
	case 0x81:
		return "malformed packet"
	case 0x82:
		return "protocol error"
	case 0x83:
		return "implementation specific error"
	case 0x87:
		return "not authorized"
	case 0x88:
		return "server unavailable"
	case 0x89:
		return "server busy"
	case 0x8B:
		return "server shutting down"
	case 0x8E:
		return "session taken over (another client connected with the same 'client-id')"
	case 0x8F:
		return "topic filter invalid"
	case 0x90:
		return "topic name invalid"
	case 0x93:
		return "receive maximum exceeded"
	case 0x95:
		return "packet too large"
	case 0x97:
		return "quota exceeded"
	case 0x99:
		return "payload format invalid"
	case 0x9A:
		return "retain not supported"
	case 0x9B:
		return "QoS not supported"
	case 0x9E:
		return "shared subscriptions not supported"
	case 0x9F:
		return "connection rate exceeded"
	case 0xA1:
		return "subscription identifiers not supported"
	case 0xA2:
		return "wildcard subscriptions not supported"
	}
	return fmt.Sprintf("reason 0x%02x", code)
}

// isTLSError reports whether err is a TLS handshake that connecting
// again will not mend (a certificate refused by either side).
func isTLSError(err error) bool {
	var te *connector.TLSError
	return errors.As(err, &te)
}

// dialOptions say how to connect.
type dialOptions struct {
	addr     string // host:port
	version  byte   // 4 (3.1.1) or 5
	clientID string
	username string
	password string
	hasUser  bool
	hasPass  bool
	clean    bool          // clean session (3.1.1) or clean start (5)
	expiry   uint32        // session expiry interval in seconds (5)
	keep     time.Duration // keep-alive
	timeout  time.Duration // for the TCP connection, the TLS handshake and the CONNACK
	tls      *tls.Config   // nil: plain TCP
	// receiveMax is the most unacknowledged QoS 1 and 2 messages the
	// broker may send at once (MQTT 5; the broker decides in 3.1.1).
	receiveMax uint16
}

// outbound is a QoS 1 or 2 publish waiting for its acknowledgement.
type outbound struct {
	qos  byte
	done func(err error)
}

// conn is one connection to a broker, over the packet codec of
// mochi-mqtt (both protocol versions): the CONNECT handshake, a read
// loop, publishing in order with the acknowledgements of QoS 1 and 2
// (PUBACK; PUBREC, PUBREL, PUBCOMP) tracked per packet, acknowledging
// received messages when the caller says so, subscribing and keep-alive.
// It never reconnects: the source and the sink do, with back-off, and
// decide what becomes of unacknowledged messages.
type conn struct {
	nc      net.Conn
	version byte
	keep    time.Duration

	wmu  sync.Mutex // guards bw and wbuf
	bw   *bufio.Writer
	wbuf bytes.Buffer

	mu       sync.Mutex
	nextID   uint16
	inflight map[uint16]*outbound
	subs     map[uint16]chan *packets.Packet
	quota    chan struct{} // a token per outbound QoS 1/2 message in flight
	err      error

	done    chan struct{} // closed when the connection ended (err says why)
	onRecv  func(pk *packets.Packet)
	busy    atomic.Bool  // onRecv is running (it may block on purpose)
	lastIn  atomic.Int64 // unix nanos of the last packet read
	session bool         // the broker had a session for the client

	// serverMaxQoS is the highest QoS the broker takes (MQTT 5).
	serverMaxQoS byte
}

// dial connects, sends CONNECT and waits for the CONNACK. onRecv is
// called on the read goroutine with every PUBLISH received; it may block,
// which holds the reading of the connection (back-pressure).
func dial(ctx context.Context, o dialOptions, onRecv func(*packets.Packet)) (*conn, error) {
	d := net.Dialer{Timeout: o.timeout}
	dctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	nc, err := d.DialContext(dctx, "tcp", o.addr)
	if err != nil {
		return nil, err
	}
	if o.tls != nil {
		tc := tls.Client(nc, o.tls)
		if err := tc.HandshakeContext(dctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake: %w", connector.ClassifyTLS(err))
		}
		nc = tc
	}
	c := &conn{nc: nc, version: o.version, keep: o.keep, bw: bufio.NewWriterSize(nc, 16<<10),
		inflight: map[uint16]*outbound{}, subs: map[uint16]chan *packets.Packet{},
		done: make(chan struct{}), onRecv: onRecv, serverMaxQoS: 2,
		// Identifiers of the client's packets are a space of their own,
		// but some brokers (mochi-mqtt) refuse a SUBSCRIBE whose
		// identifier is that of a message they are sending the client (a
		// persistent session's, numbered from 1): start far from those.
		nextID: 0xC000}
	pk := &packets.Packet{ProtocolVersion: o.version, FixedHeader: packets.FixedHeader{Type: packets.Connect}}
	pk.Connect.ProtocolName = []byte("MQTT")
	pk.Connect.ClientIdentifier = o.clientID
	pk.Connect.Clean = o.clean
	pk.Connect.Keepalive = uint16(o.keep / time.Second)
	if o.hasUser {
		pk.Connect.UsernameFlag, pk.Connect.Username = true, []byte(o.username)
	}
	if o.hasPass {
		pk.Connect.PasswordFlag, pk.Connect.Password = true, []byte(o.password)
	}
	if o.version == 5 {
		pk.Properties.SessionExpiryInterval = o.expiry
		pk.Properties.SessionExpiryIntervalFlag = o.expiry > 0
		pk.Properties.ReceiveMaximum = o.receiveMax
	}
	nc.SetDeadline(time.Now().Add(o.timeout))
	// The handshake ends early when ctx does (a reader or sink closing).
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	if err := c.write(pk, true); err != nil {
		nc.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(nc, 4<<10)
	ack, err := safeRead(br, o.version)
	if err != nil {
		nc.Close()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the broker closed the connection without answering CONNECT (a broker that does not speak this protocol version, or one refusing the client)")
		}
		// TLS 1.3 servers check the client's certificate after the
		// client's handshake is done: their refusal comes here.
		return nil, fmt.Errorf("no answer to CONNECT: %w", connector.ClassifyTLS(err))
	}
	if ack.FixedHeader.Type != packets.Connack {
		nc.Close()
		return nil, fmt.Errorf("the broker answered CONNECT with %s", packets.PacketNames[ack.FixedHeader.Type])
	}
	if err := connackError(o.version, ack.ReasonCode); err != nil {
		nc.Close()
		return nil, err
	}
	nc.SetDeadline(time.Time{})
	c.session = ack.SessionPresent
	quota := 65535
	if o.version == 5 {
		if ack.Properties.ReceiveMaximum > 0 {
			quota = int(ack.Properties.ReceiveMaximum)
		}
		if ack.Properties.MaximumQosFlag {
			c.serverMaxQoS = ack.Properties.MaximumQos
		}
		if ack.Properties.ServerKeepAliveFlag {
			c.keep = time.Duration(ack.Properties.ServerKeepAlive) * time.Second
		}
	} else {
		// 3.1.1 has no flow control: a broker keeps a window of its own
		// and may drop what goes beyond it (Mosquitto acknowledges QoS 2
		// messages past its 'max_inflight_messages', 20 by default, and
		// delivers them to no one). Keep to that window.
		quota = 20
	}
	c.quota = make(chan struct{}, quota)
	c.lastIn.Store(time.Now().UnixNano())
	go c.readLoop(br)
	if c.keep > 0 {
		go c.pingLoop()
	}
	return c, nil
}

// readLength reads a packet's remaining length (a variable byte integer).
func readLength(r *bufio.Reader) (int, error) {
	n, mul := 0, 1
	for i := 0; i < 4; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		n += int(b&0x7f) * mul
		if b&0x80 == 0 {
			return n, nil
		}
		mul *= 128
	}
	return 0, errors.New("malformed remaining length")
}

// readPacket reads and decodes one packet.
func readPacket(r *bufio.Reader, version byte) (*packets.Packet, error) {
	hb, err := r.ReadByte()
	if err != nil {
		return nil, err
	}
	pk := &packets.Packet{ProtocolVersion: version}
	if err := pk.FixedHeader.Decode(hb); err != nil {
		return nil, fmt.Errorf("malformed packet header: %w", err)
	}
	n, err := readLength(r)
	if err != nil {
		return nil, err
	}
	if n > maxPacket {
		return nil, fmt.Errorf("packet of %d bytes is too large", n)
	}
	pk.FixedHeader.Remaining = n
	var buf []byte
	if n <= 64<<10 {
		buf = make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
	} else {
		// A large packet's memory is taken as its bytes come, not on
		// the word of its header.
		var b bytes.Buffer
		if _, err := io.CopyN(&b, r, int64(n)); err != nil {
			return nil, err
		}
		buf = b.Bytes()
	}
	switch pk.FixedHeader.Type {
	case packets.Connack:
		err = pk.ConnackDecode(buf)
	case packets.Publish:
		err = pk.PublishDecode(buf)
	case packets.Puback:
		err = pk.PubackDecode(buf)
	case packets.Pubrec:
		err = pk.PubrecDecode(buf)
	case packets.Pubrel:
		err = pk.PubrelDecode(buf)
	case packets.Pubcomp:
		err = pk.PubcompDecode(buf)
	case packets.Suback:
		err = pk.SubackDecode(buf)
	case packets.Pingresp:
	case packets.Disconnect:
		if version == 5 && n > 0 {
			err = pk.DisconnectDecode(buf)
		}
	case packets.Auth:
		return nil, errors.New("the broker asks for enhanced authentication (AUTH), which the connector does not support")
	default:
		return nil, fmt.Errorf("unexpected %s packet from the broker", packets.PacketNames[pk.FixedHeader.Type])
	}
	if err != nil {
		return nil, fmt.Errorf("malformed %s packet: %w", packets.PacketNames[pk.FixedHeader.Type], err)
	}
	return pk, nil
}

// safeRead is readPacket that turns a panic of the codec over what a
// broker sent into an error: a broken broker must not take the process.
func safeRead(r *bufio.Reader, version byte) (pk *packets.Packet, err error) {
	defer func() {
		if p := recover(); p != nil {
			pk, err = nil, fmt.Errorf("malformed packet from the broker: %v", p)
		}
	}()
	return readPacket(r, version)
}

// write encodes pk into the write buffer, and sends the buffer when flush.
func (c *conn) write(pk *packets.Packet, flush bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf.Reset()
	var err error
	switch pk.FixedHeader.Type {
	case packets.Connect:
		err = pk.ConnectEncode(&c.wbuf)
	case packets.Publish:
		err = pk.PublishEncode(&c.wbuf)
	case packets.Puback:
		err = pk.PubackEncode(&c.wbuf)
	case packets.Pubrec:
		err = pk.PubrecEncode(&c.wbuf)
	case packets.Pubrel:
		err = pk.PubrelEncode(&c.wbuf)
	case packets.Pubcomp:
		err = pk.PubcompEncode(&c.wbuf)
	case packets.Subscribe:
		err = pk.SubscribeEncode(&c.wbuf)
	case packets.Pingreq:
		err = pk.PingreqEncode(&c.wbuf)
	case packets.Disconnect:
		err = pk.DisconnectEncode(&c.wbuf)
	default:
		err = fmt.Errorf("cannot send a %s packet", packets.PacketNames[pk.FixedHeader.Type])
	}
	if err != nil {
		return err
	}
	if _, err := c.bw.Write(c.wbuf.Bytes()); err != nil {
		c.fail(err)
		return err
	}
	if flush {
		if err := c.bw.Flush(); err != nil {
			c.fail(err)
			return err
		}
	}
	return nil
}

// flush sends what the write buffer holds.
func (c *conn) flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.bw.Flush(); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// fail ends the connection with err (the first cause wins).
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	waiting := c.inflight
	c.inflight = map[uint16]*outbound{}
	subs := c.subs
	c.subs = map[uint16]chan *packets.Packet{}
	close(c.done)
	c.mu.Unlock()
	c.nc.Close()
	for _, o := range waiting {
		o.done(errConnLost)
	}
	for _, ch := range subs {
		close(ch)
	}
}

// Err says why the connection ended (nil while it is up).
func (c *conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *conn) readLoop(br *bufio.Reader) {
	for {
		pk, err := safeRead(br, c.version)
		if err != nil {
			c.fail(err)
			return
		}
		c.lastIn.Store(time.Now().UnixNano())
		switch pk.FixedHeader.Type {
		case packets.Publish:
			c.busy.Store(true)
			c.onRecv(pk)
			c.busy.Store(false)
			c.lastIn.Store(time.Now().UnixNano())
		case packets.Puback, packets.Pubcomp:
			c.settle(pk.PacketID, pk.ReasonCode)
		case packets.Pubrec:
			if pk.ReasonCode >= 0x80 {
				c.settle(pk.PacketID, pk.ReasonCode)
				continue
			}
			rel := &packets.Packet{ProtocolVersion: c.version, PacketID: pk.PacketID,
				FixedHeader: packets.FixedHeader{Type: packets.Pubrel, Qos: 1}}
			if err := c.write(rel, true); err != nil {
				return
			}
		case packets.Pubrel:
			comp := &packets.Packet{ProtocolVersion: c.version, PacketID: pk.PacketID,
				FixedHeader: packets.FixedHeader{Type: packets.Pubcomp}}
			if err := c.write(comp, true); err != nil {
				return
			}
		case packets.Suback:
			c.mu.Lock()
			ch := c.subs[pk.PacketID]
			delete(c.subs, pk.PacketID)
			c.mu.Unlock()
			if ch != nil {
				ch <- pk
			}
		case packets.Disconnect:
			c.fail(fmt.Errorf("the broker disconnected the client: %s", reasonText(pk.ReasonCode)))
			return
		}
	}
}

// settle completes the outbound publish id.
func (c *conn) settle(id uint16, reason byte) {
	c.mu.Lock()
	o := c.inflight[id]
	delete(c.inflight, id)
	c.mu.Unlock()
	if o == nil {
		return
	}
	<-c.quota
	var err error
	if reason >= 0x80 {
		err = &publishRefused{reason}
	}
	o.done(err)
}

// publishRefused is a PUBACK or PUBREC that refused a message (MQTT 5).
type publishRefused struct{ code byte }

func (e *publishRefused) Error() string {
	return fmt.Sprintf("the broker refused the message: %s (code 0x%02x)", reasonText(e.code), e.code)
}

// pingLoop sends PINGREQ at three quarters of the keep-alive and ends the
// connection when nothing came from the broker for twice as long (while
// the read loop is not held by its receiver).
func (c *conn) pingLoop() {
	t := time.NewTicker(c.keep * 3 / 4)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		if !c.busy.Load() && time.Since(time.Unix(0, c.lastIn.Load())) > 2*c.keep {
			c.fail(fmt.Errorf("no answer from the broker for %s (keep-alive)", 2*c.keep))
			return
		}
		if c.write(&packets.Packet{ProtocolVersion: c.version, FixedHeader: packets.FixedHeader{Type: packets.Pingreq}}, true) != nil {
			return
		}
	}
}

// allocID returns a packet identifier not in flight. Called with c.mu.
func (c *conn) allocID() uint16 {
	for {
		c.nextID++
		if c.nextID == 0 {
			c.nextID = 1
		}
		if _, used := c.inflight[c.nextID]; !used {
			if _, used := c.subs[c.nextID]; !used {
				return c.nextID
			}
		}
	}
}

// publish sends a message without flushing the write buffer. At QoS 1 and
// 2 it first waits for room in the broker's receive window, and done is
// called (on the read goroutine, or with errConnLost when the connection
// ends) once the broker acknowledged it; at QoS 0 done is not called.
func (c *conn) publish(ctx context.Context, pk *packets.Packet, done func(error)) error {
	pk.ProtocolVersion = c.version
	pk.FixedHeader.Type = packets.Publish
	if pk.FixedHeader.Qos > 0 {
		select {
		case c.quota <- struct{}{}:
		default:
			// The window is full: what waits in the write buffer must go
			// out first, or its acknowledgements would never come.
			if err := c.flush(); err != nil {
				return err
			}
			select {
			case c.quota <- struct{}{}:
			case <-c.done:
				return c.Err()
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		c.mu.Lock()
		if c.err != nil {
			c.mu.Unlock()
			<-c.quota
			return c.err
		}
		pk.PacketID = c.allocID()
		c.inflight[pk.PacketID] = &outbound{qos: pk.FixedHeader.Qos, done: done}
		c.mu.Unlock()
	}
	return c.write(pk, false)
}

// ack acknowledges a received message: PUBACK at QoS 1, PUBREC at QoS 2
// (the broker's PUBREL is answered by the read loop). Not flushed.
func (c *conn) ack(id uint16, qos byte) error {
	t := packets.Puback
	if qos == 2 {
		t = packets.Pubrec
	}
	return c.write(&packets.Packet{ProtocolVersion: c.version, PacketID: id, FixedHeader: packets.FixedHeader{Type: t}}, false)
}

// subscribe subscribes to filters and returns the broker's granted QoS
// or reason code per filter.
func (c *conn) subscribe(ctx context.Context, subs []packets.Subscription, timeout time.Duration) ([]byte, error) {
	ch := make(chan *packets.Packet, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	id := c.allocID()
	c.subs[id] = ch
	c.mu.Unlock()
	pk := &packets.Packet{ProtocolVersion: c.version, PacketID: id, Filters: subs,
		FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}}
	if err := c.write(pk, true); err != nil {
		return nil, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case ack, ok := <-ch:
		if !ok {
			return nil, c.Err()
		}
		return ack.ReasonCodes, nil
	case <-t.C:
		return nil, fmt.Errorf("no answer to SUBSCRIBE within %s", timeout)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// close sends DISCONNECT and closes the connection.
func (c *conn) close() {
	if c.Err() == nil {
		c.write(&packets.Packet{ProtocolVersion: c.version, FixedHeader: packets.FixedHeader{Type: packets.Disconnect}}, true)
	}
	c.fail(errors.New("closed"))
}
