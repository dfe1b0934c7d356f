package amqptest

import (
	"fmt"
	"reflect"
	"strings"
)

// channel is an open channel of a connection.
type channel struct {
	id             uint16
	conn           *conn
	closing        bool // the broker sent channel.close and waits for close-ok
	prefetch       int  // basic.qos for consumers made from now on
	globalPrefetch int
	consumers      map[string]*consumer
	unacked        []delivery // in delivery-tag order
	nextTag        uint64
	confirm        bool
	pubSeq         uint64
	pub            *publishing // a basic.publish waiting for its content
}

// delivery is a message delivered on the channel and not yet
// acknowledged.
type delivery struct {
	tag uint64
	q   *queue
	m   *message
	c   *consumer // nil for basic.get
}

// publishing is a basic.publish whose content is being read.
type publishing struct {
	exchange, routingKey string
	mandatory            bool
	header               []byte
	props                Properties
	size                 uint64
	body                 []byte
	gotHeader            bool
}

func (ch *channel) unackedCount() int { return len(ch.unacked) }

// frame handles a frame on the channel.
func (ch *channel) frame(f frame) error {
	if p := ch.pub; p != nil {
		switch {
		case f.typ == frameHeader && !p.gotHeader:
			h, err := decodeHeader(f.payload)
			if err != nil {
				return &connError{replySyntaxError, "SYNTAX_ERROR - " + err.Error(), basicPublish}
			}
			if h.class != 60 {
				return &connError{replyCommandInvalid, fmt.Sprintf("COMMAND_INVALID - content header of class %d", h.class), basicPublish}
			}
			if h.bodySize > 512<<20 {
				return &connError{replyFrameError, fmt.Sprintf("FRAME_ERROR - a body of %d bytes", h.bodySize), basicPublish}
			}
			p.gotHeader, p.header, p.props, p.size = true, f.payload, h.props, h.bodySize
		case f.typ == frameBody && p.gotHeader:
			p.body = append(p.body, f.payload...)
			if uint64(len(p.body)) > p.size {
				return &connError{replyFrameError, "FRAME_ERROR - more body than the content header announced", basicPublish}
			}
		default:
			return &connError{replyUnexpected, fmt.Sprintf("UNEXPECTED_FRAME - a frame of type %d on channel %d in the middle of a message", f.typ, ch.id), basicPublish}
		}
		if p.gotHeader && uint64(len(p.body)) == p.size {
			ch.pub = nil
			return ch.publish(p)
		}
		return nil
	}
	if f.typ != frameMethod {
		return &connError{replyUnexpected, fmt.Sprintf("UNEXPECTED_FRAME - a frame of type %d on channel %d without a method", f.typ, ch.id), methodID{}}
	}
	id, args, err := decodeMethod(f.payload)
	if err != nil {
		return &connError{replySyntaxError, "SYNTAX_ERROR - " + err.Error(), id}
	}
	return ch.method(id, args)
}

// method handles a method on the channel.
func (ch *channel) method(id methodID, args []any) error {
	b, c := ch.conn.b, ch.conn
	switch id {
	case chanClose:
		ch.releaseLocked()
		delete(c.channels, ch.id)
		c.sendMethod(ch.id, chanCloseOk)
		return nil
	case chanCloseOk:
		return nil
	case chanFlow:
		c.sendMethod(ch.id, chanFlowOk, args[0].(bool))
		return nil

	case exDeclare:
		name, kind := args[1].(string), args[2].(string)
		passive, durable, autoDelete, internal, noWait := args[3].(bool), args[4].(bool), args[5].(bool), args[6].(bool), args[7].(bool)
		e := b.exchanges[name]
		if passive {
			if e == nil {
				return chErr(replyNotFound, "no exchange '%s' in vhost '/'", name)
			}
		} else if e != nil {
			if e.kind != kind {
				return chErr(replyPrecondition, "inequivalent arg 'type' for exchange '%s' in vhost '/': received '%s' but current is '%s'", name, kind, e.kind)
			}
			if e.durable != durable {
				return chErr(replyPrecondition, "inequivalent arg 'durable' for exchange '%s' in vhost '/': received '%t' but current is '%t'", name, durable, e.durable)
			}
		} else {
			if name == "" || strings.HasPrefix(name, "amq.") {
				return chErr(replyAccessRefused, "exchange name '%s' contains reserved prefix 'amq.*'", name)
			}
			switch kind {
			case "direct", "fanout", "topic":
			case "headers":
				return chErr(replyPrecondition, "amqptest does not model headers exchanges")
			default:
				return &connError{replyCommandInvalid, fmt.Sprintf("COMMAND_INVALID - unknown exchange type '%s'", kind), id}
			}
			b.exchanges[name] = &exchange{name: name, kind: kind, durable: durable, autoDelete: autoDelete, internal: internal}
		}
		if !noWait {
			c.sendMethod(ch.id, exDeclareOk)
		}
		return nil
	case exDelete:
		name, noWait := args[1].(string), args[3].(bool)
		if name == "" || strings.HasPrefix(name, "amq.") {
			return chErr(replyAccessRefused, "operation not permitted on exchange '%s'", name)
		}
		delete(b.exchanges, name)
		if !noWait {
			c.sendMethod(ch.id, exDeleteOk)
		}
		return nil

	case qDeclare:
		name := args[1].(string)
		passive, durable, exclusive, autoDelete, noWait := args[2].(bool), args[3].(bool), args[4].(bool), args[5].(bool), args[6].(bool)
		qargs, _ := args[7].(Table)
		q := b.queues[name]
		if passive {
			if q == nil {
				return chErr(replyNotFound, "no queue '%s' in vhost '/'", name)
			}
			if err := ch.access(q); err != nil {
				return err
			}
		} else if q != nil {
			if err := ch.access(q); err != nil {
				return err
			}
			for _, d := range []struct {
				arg       string
				got, have bool
			}{{"durable", durable, q.durable}, {"exclusive", exclusive, q.exclusive}, {"auto_delete", autoDelete, q.autoDelete}} {
				if d.got != d.have {
					return chErr(replyPrecondition, "inequivalent arg '%s' for queue '%s' in vhost '/': received '%t' but current is '%t'", d.arg, name, d.got, d.have)
				}
			}
			for _, k := range []string{"x-max-length", "x-overflow", "x-queue-type"} {
				if !reflect.DeepEqual(normArg(qargs[k]), normArg(q.args[k])) && !(k == "x-queue-type" && (qargs[k] == nil || q.args[k] == nil)) {
					return chErr(replyPrecondition, "inequivalent arg '%s' for queue '%s' in vhost '/': received %v but current is %v", k, name, qargs[k], q.args[k])
				}
			}
		} else {
			if name == "" {
				b.nextName++
				name = fmt.Sprintf("amq.gen-%d", b.nextName)
			} else if strings.HasPrefix(name, "amq.") {
				return chErr(replyAccessRefused, "queue name '%s' contains reserved prefix 'amq.*'", name)
			}
			q = &queue{name: name, durable: durable, exclusive: exclusive, autoDelete: autoDelete, args: qargs, maxLen: -1}
			if exclusive {
				q.owner = c
			}
			if err := q.applyArgs(); err != nil {
				return err
			}
			b.queues[name] = q
		}
		if !noWait {
			c.sendMethod(ch.id, qDeclareOk, name, uint32(len(q.ready)), uint32(len(q.consumers)))
		}
		return nil
	case qBind, qUnbind:
		qname, ex, key := args[1].(string), args[2].(string), args[3].(string)
		q := b.queues[qname]
		if q == nil {
			return chErr(replyNotFound, "no queue '%s' in vhost '/'", qname)
		}
		if err := ch.access(q); err != nil {
			return err
		}
		e := b.exchanges[ex]
		if e == nil {
			return chErr(replyNotFound, "no exchange '%s' in vhost '/'", ex)
		}
		if ex == "" {
			return chErr(replyAccessRefused, "operation not permitted on the default exchange")
		}
		bd := binding{queue: qname, key: key}
		at := -1
		for i, x := range e.bindings {
			if x == bd {
				at = i
			}
		}
		if id == qBind {
			if at < 0 {
				e.bindings = append(e.bindings, bd)
			}
			if !args[4].(bool) {
				c.sendMethod(ch.id, qBindOk)
			}
		} else {
			if at >= 0 {
				e.bindings = append(e.bindings[:at], e.bindings[at+1:]...)
			}
			c.sendMethod(ch.id, qUnbindOk)
		}
		return nil
	case qPurge:
		q := b.queues[args[1].(string)]
		if q == nil {
			return chErr(replyNotFound, "no queue '%s' in vhost '/'", args[1].(string))
		}
		if err := ch.access(q); err != nil {
			return err
		}
		n := len(q.ready)
		q.ready = nil
		if !args[2].(bool) {
			c.sendMethod(ch.id, qPurgeOk, uint32(n))
		}
		return nil
	case qDelete:
		q := b.queues[args[1].(string)]
		n := 0
		if q != nil {
			if err := ch.access(q); err != nil {
				return err
			}
			if args[2].(bool) && len(q.consumers) > 0 {
				return chErr(replyPrecondition, "queue '%s' in vhost '/' in use", q.name)
			}
			if args[3].(bool) && len(q.ready) > 0 {
				return chErr(replyPrecondition, "queue '%s' in vhost '/' is not empty", q.name)
			}
			n = b.deleteQueueLocked(q)
		}
		if !args[4].(bool) {
			c.sendMethod(ch.id, qDeleteOk, uint32(n))
		}
		return nil

	case basicQos:
		n, global := int(args[1].(uint16)), args[2].(bool)
		if global {
			ch.globalPrefetch = n
		} else {
			ch.prefetch = n
		}
		c.sendMethod(ch.id, basicQosOk)
		for _, q := range ch.queues() {
			b.dispatchLocked(q)
		}
		return nil
	case basicConsume:
		qname, tag := args[1].(string), args[2].(string)
		noAck, exclusive, noWait := args[4].(bool), args[5].(bool), args[6].(bool)
		q := b.queues[qname]
		if q == nil {
			return chErr(replyNotFound, "no queue '%s' in vhost '/'", qname)
		}
		if err := ch.access(q); err != nil {
			return err
		}
		if exclusive && len(q.consumers) > 0 || len(q.consumers) > 0 && q.consumers[0].exclusive {
			return chErr(replyAccessRefused, "queue '%s' in vhost '/' in exclusive use", qname)
		}
		if tag == "" {
			b.nextName++
			tag = fmt.Sprintf("amq.ctag-%d", b.nextName)
		}
		if ch.consumers[tag] != nil {
			return &connError{replyNotAllowed, fmt.Sprintf("NOT_ALLOWED - attempt to reuse consumer tag '%s'", tag), id}
		}
		cs := &consumer{tag: tag, ch: ch, q: q, noAck: noAck, exclusive: exclusive, prefetch: ch.prefetch}
		ch.consumers[tag] = cs
		q.consumers = append(q.consumers, cs)
		q.hadConsumr = true
		if !noWait {
			c.sendMethod(ch.id, basicConsOk, tag)
		}
		b.dispatchLocked(q)
		return nil
	case basicCancel:
		tag := args[0].(string)
		if cs := ch.consumers[tag]; cs != nil {
			ch.removeConsumerLocked(cs, true)
		}
		if !args[1].(bool) {
			c.sendMethod(ch.id, basicCancelOk, tag)
		}
		return nil
	case basicPublish:
		if args[4].(bool) {
			return &connError{replyNotImplemented, "NOT_IMPLEMENTED - immediate=true", id}
		}
		ch.pub = &publishing{exchange: args[1].(string), routingKey: args[2].(string), mandatory: args[3].(bool)}
		return nil
	case basicGet:
		q := b.queues[args[1].(string)]
		if q == nil {
			return chErr(replyNotFound, "no queue '%s' in vhost '/'", args[1].(string))
		}
		if err := ch.access(q); err != nil {
			return err
		}
		if len(q.ready) == 0 {
			c.sendMethod(ch.id, basicGetEmpty, "")
			return nil
		}
		m := q.ready[0]
		q.ready[0] = nil
		q.ready = q.ready[1:]
		ch.nextTag++
		m.delivered = true
		if !args[2].(bool) {
			ch.unacked = append(ch.unacked, delivery{tag: ch.nextTag, q: q, m: m})
			q.unacked++
		}
		c.sendContent(ch.id, encodeMethod(basicGetOk, ch.nextTag, m.redelivered, m.exchange, m.routingKey, uint32(len(q.ready))), m.header, m.body)
		return nil
	case basicAck, basicNack, basicReject:
		tag, multiple, requeue := args[0].(uint64), false, false
		switch id {
		case basicAck:
			multiple = args[1].(bool)
		case basicNack:
			multiple, requeue = args[1].(bool), args[2].(bool)
		case basicReject:
			requeue = args[1].(bool)
		}
		ds, err := ch.takeUnacked(tag, multiple)
		if err != nil {
			return err
		}
		ch.settle(ds, requeue)
		return nil
	case basicRecover:
		ds := ch.unacked
		ch.unacked = nil
		ch.settle(ds, true)
		c.sendMethod(ch.id, basicRecovOk)
		return nil
	case confSelect:
		ch.confirm = true
		if !args[0].(bool) {
			c.sendMethod(ch.id, confSelectOk)
		}
		return nil
	}
	return &connError{replyNotImplemented, fmt.Sprintf("NOT_IMPLEMENTED - amqptest does not model %s", id), id}
}

// normArg makes integer arguments of different widths compare equal.
func normArg(v any) any {
	if n, ok := intArg(v); ok {
		return n
	}
	return v
}

func intArg(v any) (int64, bool) {
	switch v := v.(type) {
	case int8:
		return int64(v), true
	case uint8:
		return int64(v), true
	case int16:
		return int64(v), true
	case uint16:
		return int64(v), true
	case int32:
		return int64(v), true
	case uint32:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}

// applyArgs reads the queue arguments the broker models.
func (q *queue) applyArgs() error {
	for k, v := range q.args {
		switch k {
		case "x-max-length":
			n, ok := intArg(v)
			if !ok || n < 0 {
				return chErr(replyPrecondition, "invalid arg 'x-max-length' for queue '%s' in vhost '/': %v", q.name, v)
			}
			q.maxLen = n
		case "x-overflow":
			switch v {
			case "drop-head":
			case "reject-publish":
				q.rejectPub = true
			default:
				return chErr(replyPrecondition, "invalid arg 'x-overflow' for queue '%s' in vhost '/': %v (amqptest models drop-head and reject-publish)", q.name, v)
			}
		case "x-queue-type":
			if v != "classic" {
				return chErr(replyPrecondition, "amqptest does not model x-queue-type '%v'", v)
			}
		default:
			return chErr(replyPrecondition, "amqptest does not model the queue argument '%s'", k)
		}
	}
	return nil
}

// access refuses another connection's exclusive queue.
func (ch *channel) access(q *queue) error {
	if q.exclusive && q.owner != ch.conn {
		return chErr(replyResourceLocked, "cannot obtain exclusive access to locked queue '%s' in vhost '/'", q.name)
	}
	return nil
}

// queues returns the queues the channel's consumers read.
func (ch *channel) queues() []*queue {
	var out []*queue
	seen := map[*queue]bool{}
	for _, cs := range ch.consumers {
		if !seen[cs.q] {
			seen[cs.q] = true
			out = append(out, cs.q)
		}
	}
	return out
}

// publish routes a message published on the channel and confirms it.
func (ch *channel) publish(p *publishing) error {
	b, c := ch.conn.b, ch.conn
	e := b.exchanges[p.exchange]
	if e == nil {
		return chErr(replyNotFound, "no exchange '%s' in vhost '/'", p.exchange)
	}
	if e.internal {
		return chErr(replyAccessRefused, "cannot publish to internal exchange '%s' in vhost '/'", p.exchange)
	}
	m := &message{exchange: p.exchange, routingKey: p.routingKey, props: p.props, header: p.header, body: p.body,
		persistent: p.props.DeliveryMode == 2}
	n, rejected := b.enqueueLocked(e, m)
	if n == 0 && !rejected && p.mandatory {
		c.sendContent(ch.id, encodeMethod(basicReturn, uint16(replyNoRoute), "NO_ROUTE", p.exchange, p.routingKey), p.header, p.body)
	}
	if ch.confirm {
		ch.pubSeq++
		if rejected {
			c.sendMethod(ch.id, basicNack, ch.pubSeq, false, false)
		} else {
			c.sendMethod(ch.id, basicAck, ch.pubSeq, false)
		}
	}
	return nil
}

// deliverLocked sends m from q to consumer cs.
func (ch *channel) deliverLocked(cs *consumer, q *queue, m *message) {
	ch.nextTag++
	m.delivered = true
	if !cs.noAck {
		ch.unacked = append(ch.unacked, delivery{tag: ch.nextTag, q: q, m: m, c: cs})
		cs.unacked++
		q.unacked++
	}
	ch.conn.sendContent(ch.id, encodeMethod(basicDeliver, cs.tag, ch.nextTag, m.redelivered, m.exchange, m.routingKey), m.header, m.body)
}

// takeUnacked removes the deliveries an ack, nack or reject names: tag,
// or with multiple every one up to tag (0: all).
func (ch *channel) takeUnacked(tag uint64, multiple bool) ([]delivery, error) {
	if multiple {
		n := 0
		for n < len(ch.unacked) && (tag == 0 || ch.unacked[n].tag <= tag) {
			n++
		}
		if n == 0 && tag != 0 {
			return nil, chErr(replyPrecondition, "unknown delivery tag %d", tag)
		}
		ds := append([]delivery(nil), ch.unacked[:n]...)
		ch.unacked = append(ch.unacked[:0], ch.unacked[n:]...)
		return ds, nil
	}
	for i, d := range ch.unacked {
		if d.tag == tag {
			ch.unacked = append(ch.unacked[:i], ch.unacked[i+1:]...)
			return []delivery{d}, nil
		}
	}
	return nil, chErr(replyPrecondition, "unknown delivery tag %d", tag)
}

// settle forgets acknowledged deliveries, or requeues them; then the
// queues whose consumers got room are served.
func (ch *channel) settle(ds []delivery, requeue bool) {
	b := ch.conn.b
	byQueue := map[*queue][]*message{}
	var order []*queue
	for _, d := range ds {
		if d.c != nil {
			d.c.unacked--
		}
		d.q.unacked--
		if requeue {
			if _, ok := byQueue[d.q]; !ok {
				order = append(order, d.q)
			}
			byQueue[d.q] = append(byQueue[d.q], d.m)
		}
	}
	for _, q := range order {
		if b.queues[q.name] == q {
			b.requeueLocked(q, byQueue[q])
		}
	}
	for _, q := range ch.queues() {
		b.dispatchLocked(q)
	}
	for _, q := range order {
		if b.queues[q.name] == q {
			b.dispatchLocked(q)
		}
	}
}

// removeConsumerLocked cancels a consumer; an auto-delete queue goes
// with its last consumer.
func (ch *channel) removeConsumerLocked(cs *consumer, autoDelete bool) {
	delete(ch.consumers, cs.tag)
	q := cs.q
	for i, x := range q.consumers {
		if x == cs {
			q.consumers = append(q.consumers[:i], q.consumers[i+1:]...)
			if q.next > i {
				q.next--
			}
			break
		}
	}
	if len(q.consumers) == 0 {
		q.next = 0
		if autoDelete && q.autoDelete && q.hadConsumr && ch.conn.b.queues[q.name] == q {
			ch.conn.b.deleteQueueLocked(q)
		}
	}
}

// releaseLocked ends the channel's consumers and requeues what it
// delivered and was not acknowledged.
func (ch *channel) releaseLocked() {
	ds := ch.unacked
	ch.unacked = nil
	for _, cs := range ch.consumers {
		ch.removeConsumerLocked(cs, true)
	}
	ch.pub = nil
	ch.settle(ds, true)
}
