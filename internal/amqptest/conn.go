package amqptest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// conn is one client connection. Its reading goroutine handles each
// frame under the broker's lock; what the broker sends goes to an output
// buffer that a writing goroutine drains, so that no client that reads
// slowly holds the broker up.
type conn struct {
	b  *Broker
	nc net.Conn
	br *bufio.Reader

	// under b.mu
	state     int // 0 start-ok expected, 1 tune-ok, 2 open, 3 open, 4 closing
	user      string
	info      Client // what the client said in start-ok and tune-ok
	channels  map[uint16]*channel
	frameMax  uint32
	heartbeat time.Duration
	ended     bool
	chanMax   uint16

	omu      sync.Mutex
	out      []byte
	finish   bool // the writer ends once out is written
	wake     chan struct{}
	done     chan struct{}
	loops    sync.WaitGroup
	stopBeat chan struct{}
}

// serve runs the connection: the handshake, then frames until it ends.
func (c *conn) serve() {
	c.loops.Add(2)
	go c.write()
	go func() {
		c.loops.Wait()
		close(c.done)
	}()
	defer c.loops.Done()
	err := c.read()
	c.b.mu.Lock()
	if !c.ended {
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, errConnClosed) {
			code := uint16(replyFrameError)
			if !errors.Is(err, errFrame) {
				code = replySyntaxError
			}
			c.sendMethod(0, connClose, code, fmt.Sprintf("%s - %v", replyName(code), err), uint16(0), uint16(0))
		}
		c.endLocked()
	}
	c.b.mu.Unlock()
}

// read reads frames until the connection ends.
func (c *conn) read() error {
	var hdr [8]byte
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c.br, hdr[:]); err != nil {
		return err
	}
	c.nc.SetReadDeadline(time.Time{})
	if !bytes.Equal(hdr[:], protocolHeader) {
		c.queue(protocolHeader)
		return errConnClosed
	}
	c.b.mu.Lock()
	c.sendMethod(0, connStart, byte(0), byte(9), Table{
		"product":  "amqptest",
		"version":  "0.1",
		"platform": "Go",
		"capabilities": Table{
			"publisher_confirms": true, "exchange_exchange_bindings": false, "basic.nack": true,
			"consumer_cancel_notify": true, "connection.blocked": false, "authentication_failure_close": true,
			"per_consumer_qos": true, "direct_reply_to": false,
		},
	}, strings.Join(c.b.mechanisms, " "), "en_US")
	c.b.mu.Unlock()
	for {
		c.b.mu.Lock()
		max := c.frameMax
		c.b.mu.Unlock()
		f, err := readFrame(c.br, max)
		if err != nil {
			return err
		}
		c.b.mu.Lock()
		if c.ended {
			c.b.mu.Unlock()
			return errConnClosed
		}
		err = c.handle(f)
		c.b.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// connError closes the connection with a connection exception.
type connError struct {
	code uint16
	text string
	m    methodID
}

func (e *connError) Error() string { return fmt.Sprintf("%d %s", e.code, e.text) }

// chanError closes a channel with a channel exception.
type chanError struct {
	code uint16
	text string
}

func (e *chanError) Error() string { return fmt.Sprintf("%d %s", e.code, e.text) }

func chErr(code uint16, format string, args ...any) error {
	return &chanError{code, replyName(code) + " - " + fmt.Sprintf(format, args...)}
}

func replyName(code uint16) string {
	switch code {
	case replyNoRoute:
		return "NO_ROUTE"
	case replyConnForced:
		return "CONNECTION_FORCED"
	case replyAccessRefused:
		return "ACCESS_REFUSED"
	case replyNotFound:
		return "NOT_FOUND"
	case replyResourceLocked:
		return "RESOURCE_LOCKED"
	case replyPrecondition:
		return "PRECONDITION_FAILED"
	case replyFrameError:
		return "FRAME_ERROR"
	case replySyntaxError:
		return "SYNTAX_ERROR"
	case replyCommandInvalid:
		return "COMMAND_INVALID"
	case replyChannelError:
		return "CHANNEL_ERROR"
	case replyUnexpected:
		return "UNEXPECTED_FRAME"
	case replyNotAllowed:
		return "NOT_ALLOWED"
	case replyNotImplemented:
		return "NOT_IMPLEMENTED"
	}
	return strconv.Itoa(int(code))
}

// handle handles one frame; an error other than a connError or
// chanError ends the connection at once.
func (c *conn) handle(f frame) error {
	if c.state == 4 {
		// The broker closed the connection: only close-ok (or close) counts.
		if f.typ == frameMethod {
			if id, _, err := decodeMethod(f.payload); err == nil && (id == connCloseOk || id == connClose) {
				if id == connClose {
					c.sendMethod(0, connCloseOk)
				}
				c.endLocked()
				return errConnClosed
			}
		}
		return nil
	}
	err := c.handleFrame(f)
	var ce *connError
	if errors.As(err, &ce) {
		c.sendMethod(0, connClose, ce.code, ce.text, ce.m.class, ce.m.method)
		c.state = 4
		c.releaseAllLocked()
		return nil
	}
	return err
}

func (c *conn) handleFrame(f frame) error {
	if f.typ == frameHeartbeat {
		return nil
	}
	if f.channel == 0 {
		if f.typ != frameMethod {
			return &connError{replyCommandInvalid, "COMMAND_INVALID - content on channel 0", methodID{}}
		}
		id, args, err := decodeMethod(f.payload)
		if err != nil {
			return &connError{replySyntaxError, "SYNTAX_ERROR - " + err.Error(), id}
		}
		return c.connMethod(id, args)
	}
	if c.state != 3 {
		return &connError{replyChannelError, "CHANNEL_ERROR - the connection is not open", methodID{}}
	}
	ch := c.channels[f.channel]
	if ch == nil {
		if f.typ != frameMethod {
			return &connError{replyChannelError, fmt.Sprintf("CHANNEL_ERROR - channel %d is not open", f.channel), methodID{}}
		}
		id, _, err := decodeMethod(f.payload)
		if err != nil {
			return &connError{replySyntaxError, "SYNTAX_ERROR - " + err.Error(), id}
		}
		if id != chanOpen {
			return &connError{replyChannelError, fmt.Sprintf("CHANNEL_ERROR - expected channel.open on channel %d, got %s", f.channel, id), id}
		}
		if c.chanMax > 0 && f.channel > c.chanMax {
			return &connError{replyChannelError, fmt.Sprintf("CHANNEL_ERROR - channel %d above channel-max %d", f.channel, c.chanMax), id}
		}
		c.channels[f.channel] = &channel{id: f.channel, conn: c, consumers: map[string]*consumer{}}
		c.sendMethod(f.channel, chanOpenOk, "")
		return nil
	}
	if ch.closing {
		if f.typ == frameMethod {
			if id, _, err := decodeMethod(f.payload); err == nil {
				switch id {
				case chanCloseOk:
					delete(c.channels, ch.id)
				case chanClose:
					c.sendMethod(ch.id, chanCloseOk)
				}
			}
		}
		return nil
	}
	err := ch.frame(f)
	var ce *chanError
	if errors.As(err, &ce) {
		c.sendMethod(ch.id, chanClose, ce.code, ce.text, uint16(0), uint16(0))
		ch.closing = true
		ch.releaseLocked()
		return nil
	}
	return err
}

// connMethod handles a method on channel 0.
func (c *conn) connMethod(id methodID, args []any) error {
	switch {
	case c.state == 0 && id == connStartOk:
		props, mech, resp := args[0].(Table), args[1].(string), args[2].(string)
		if !slices.Contains(c.b.mechanisms, mech) {
			return &connError{replyAccessRefused, fmt.Sprintf("ACCESS_REFUSED - unsupported authentication mechanism '%s'", mech), id}
		}
		var user string
		if mech == "EXTERNAL" {
			// The user is the client certificate's common name, as
			// RabbitMQ's rabbitmq_auth_mechanism_ssl takes it by default.
			tc, _ := c.nc.(*tls.Conn)
			if tc == nil || len(tc.ConnectionState().PeerCertificates) == 0 {
				return &connError{replyAccessRefused, "ACCESS_REFUSED - EXTERNAL login refused: no peer certificate", id}
			}
			user = tc.ConnectionState().PeerCertificates[0].Subject.CommonName
			if _, ok := c.b.users[user]; !ok {
				return &connError{replyAccessRefused, fmt.Sprintf("ACCESS_REFUSED - EXTERNAL login refused: user '%s' - invalid credentials", user), id}
			}
		} else {
			u, pass, ok := credentials(mech, resp)
			if !ok {
				return &connError{replyAccessRefused, fmt.Sprintf("ACCESS_REFUSED - malformed %s response", mech), id}
			}
			if pw, ok := c.b.users[u]; !ok || pw != pass {
				return &connError{replyAccessRefused, fmt.Sprintf("ACCESS_REFUSED - Login was refused using authentication mechanism %s. For details see the broker logfile.", mech), id}
			}
			user = u
		}
		c.user = user
		c.info.Mechanism, c.info.User = mech, user
		c.info.Name, _ = props["connection_name"].(string)
		c.state = 1
		c.sendMethod(0, connTune, uint16(2047), uint32(131072), uint16(c.b.Heartbeat/time.Second))
		return nil
	case c.state == 1 && id == connTuneOk:
		c.chanMax = args[0].(uint16)
		fm := args[1].(uint32)
		if fm != 0 && fm < minFrameMax {
			return &connError{replySyntaxError, fmt.Sprintf("SYNTAX_ERROR - frame-max %d is below %d", fm, minFrameMax), id}
		}
		if fm == 0 || fm > 131072 {
			fm = 131072
		}
		c.frameMax = fm
		c.info.ChannelMax, c.info.FrameMax = c.chanMax, args[1].(uint32)
		c.info.Heartbeat = time.Duration(args[2].(uint16)) * time.Second
		if hb := time.Duration(args[2].(uint16)) * time.Second; hb > 0 {
			c.heartbeat = hb
			c.stopBeat = make(chan struct{})
			go c.beat(hb, c.stopBeat)
		}
		c.state = 2
		return nil
	case c.state == 2 && id == connOpen:
		if vh := args[0].(string); vh != "/" {
			return &connError{replyNotAllowed, fmt.Sprintf("NOT_ALLOWED - vhost %s not found", vh), id}
		}
		c.state = 3
		c.sendMethod(0, connOpenOk, "")
		return nil
	case id == connClose:
		c.releaseAllLocked()
		c.sendMethod(0, connCloseOk)
		c.endLocked()
		return errConnClosed
	case id == connCloseOk:
		c.endLocked()
		return errConnClosed
	}
	return &connError{replyCommandInvalid, fmt.Sprintf("COMMAND_INVALID - %s in this state", id), id}
}

// credentials reads the user name and password of a PLAIN response
// ("\x00user\x00password") or an AMQPLAIN one (a field table's content,
// without its length, with LOGIN and PASSWORD).
func credentials(mech, resp string) (user, pass string, ok bool) {
	switch mech {
	case "PLAIN":
		parts := bytes.SplitN([]byte(resp), []byte{0}, 3)
		if len(parts) != 3 {
			return "", "", false
		}
		return string(parts[1]), string(parts[2]), true
	case "AMQPLAIN":
		d := decoder{b: binary.BigEndian.AppendUint32(nil, uint32(len(resp)))}
		d.b = append(d.b, resp...)
		t := d.table(0)
		user, ok1 := t["LOGIN"].(string)
		pass, ok2 := t["PASSWORD"].(string)
		return user, pass, d.err == nil && ok1 && ok2
	}
	return "", "", false
}

// beat sends a heartbeat every half interval until stop closes.
func (c *conn) beat(hb time.Duration, stop chan struct{}) {
	t := time.NewTicker(hb / 2)
	defer t.Stop()
	hbFrame := appendFrame(nil, frameHeartbeat, 0, nil)
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			c.queue(hbFrame)
		}
	}
}

// queue appends bytes to the output.
func (c *conn) queue(p []byte) {
	c.omu.Lock()
	c.out = append(c.out, p...)
	c.omu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// sendMethod queues a method frame.
func (c *conn) sendMethod(ch uint16, id methodID, args ...any) {
	c.queue(appendFrame(nil, frameMethod, ch, encodeMethod(id, args...)))
}

// sendContent queues a method frame with its content, the body in frames
// of at most frame-max.
func (c *conn) sendContent(ch uint16, method []byte, header []byte, body []byte) {
	b := appendFrame(nil, frameMethod, ch, method)
	b = appendFrame(b, frameHeader, ch, header)
	max := int(c.frameMax) - 8
	for len(body) > 0 {
		n := min(len(body), max)
		b = appendFrame(b, frameBody, ch, body[:n])
		body = body[n:]
	}
	c.queue(b)
}

// write writes the output until the connection ends.
func (c *conn) write() {
	defer c.loops.Done()
	defer c.nc.Close()
	for {
		c.omu.Lock()
		buf, finish := c.out, c.finish
		c.out = nil
		c.omu.Unlock()
		if len(buf) > 0 {
			c.nc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := c.nc.Write(buf); err != nil {
				return
			}
			continue
		}
		if finish {
			return
		}
		<-c.wake
	}
}

// endLocked ends the connection: its channels are released (their
// unacknowledged messages requeued), its exclusive queues deleted, and
// the writer ends once it has written what is queued.
func (c *conn) endLocked() {
	if c.ended {
		return
	}
	c.ended = true
	c.releaseAllLocked()
	for _, q := range c.b.queues {
		if q.exclusive && q.owner == c {
			c.b.deleteQueueLocked(q)
		}
	}
	delete(c.b.conns, c)
	if c.stopBeat != nil {
		close(c.stopBeat)
		c.stopBeat = nil
	}
	c.omu.Lock()
	c.finish = true
	c.omu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	// A client that does not read its socket must not keep the writer.
	go func() {
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			c.nc.Close()
		}
	}()
}

// releaseAllLocked releases every channel of the connection.
func (c *conn) releaseAllLocked() {
	ids := make([]int, 0, len(c.channels))
	for id := range c.channels {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	for _, id := range ids {
		c.channels[uint16(id)].releaseLocked()
	}
	clear(c.channels)
}

// wait waits for the connection's goroutines to end.
func (c *conn) wait() {
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.nc.Close()
		<-c.done
	}
}
