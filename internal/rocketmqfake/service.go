package rocketmqfake

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sluicesql/sluice/internal/rmqwire"
)

// service implements the MessagingService for a Server.
type service struct {
	v2.UnimplementedMessagingServiceServer
	s *Server
}

func ok() *v2.Status { return &v2.Status{Code: v2.Code_OK, Message: "OK"} }

func bad(code v2.Code, format string, args ...any) *v2.Status {
	return &v2.Status{Code: code, Message: fmt.Sprintf(format, args...)}
}

// auth checks the call's signature when the server has credentials.
func (sv *service) auth(ctx context.Context) *v2.Status {
	creds := sv.s.opts.Credentials
	if creds == nil {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	first := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	a, date := first("authorization"), first("x-mq-date-time")
	// MQv2-HMAC-SHA1 Credential=AK/.../Rocketmq, SignedHeaders=x-mq-date-time, Signature=HEX
	rest, found := strings.CutPrefix(a, "MQv2-HMAC-SHA1 ")
	if !found {
		return bad(v2.Code_UNAUTHORIZED, "no signature: the call carries no MQv2-HMAC-SHA1 authorization")
	}
	var ak, sig string
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			ak, _, _ = strings.Cut(v, "/")
		case "Signature":
			sig = v
		}
	}
	secret, known := creds[ak]
	if !known {
		return bad(v2.Code_UNAUTHORIZED, "unknown access key '%s'", ak)
	}
	h := hmac.New(sha1.New, []byte(secret))
	h.Write([]byte(date))
	if !hmac.Equal([]byte(hex.EncodeToString(h.Sum(nil))), []byte(strings.ToLower(sig))) {
		return bad(v2.Code_UNAUTHORIZED, "wrong signature for access key '%s'", ak)
	}
	return nil
}

func (sv *service) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	if st := sv.auth(ctx); st != nil {
		return &v2.QueryRouteResponse{Status: st}, nil
	}
	s := sv.s
	s.mu.Lock()
	t := s.topicLocked(req.GetTopic())
	var n int
	if t != nil {
		n = len(t.queues)
	}
	s.mu.Unlock()
	if t == nil {
		return &v2.QueryRouteResponse{Status: bad(v2.Code_TOPIC_NOT_FOUND, "topic '%s' does not exist", resourceKey(req.GetTopic()))}, nil
	}
	ep := req.GetEndpoints()
	if len(ep.GetAddresses()) == 0 {
		host, port, _ := strings.Cut(s.addr, ":")
		p, _ := strconv.Atoi(port)
		ep = &v2.Endpoints{Scheme: v2.AddressScheme_IPv4, Addresses: []*v2.Address{{Host: host, Port: int32(p)}}}
	}
	resp := &v2.QueryRouteResponse{Status: ok()}
	for i := 0; i < n; i++ {
		resp.MessageQueues = append(resp.MessageQueues, &v2.MessageQueue{
			Topic: req.GetTopic(), Id: int32(i), Permission: v2.Permission_READ_WRITE,
			Broker:             &v2.Broker{Name: brokerName, Id: 0, Endpoints: ep},
			AcceptMessageTypes: []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY, v2.MessageType_TRANSACTION},
		})
	}
	return resp, nil
}

func (sv *service) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	if st := sv.auth(ctx); st != nil {
		return &v2.HeartbeatResponse{Status: st}, nil
	}
	return &v2.HeartbeatResponse{Status: ok()}, nil
}

func (sv *service) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	if st := sv.auth(ctx); st != nil {
		return &v2.SendMessageResponse{Status: st}, nil
	}
	s := sv.s
	resp := &v2.SendMessageResponse{Status: ok()}
	if len(req.GetMessages()) == 0 {
		resp.Status = bad(v2.Code_BAD_REQUEST, "no message to send")
		return resp, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range req.GetMessages() {
		sp := m.GetSystemProperties()
		e := &v2.SendResultEntry{Status: ok(), MessageId: sp.GetMessageId()}
		t := s.topicLocked(m.GetTopic())
		switch {
		case sp.GetMessageId() == "":
			e.Status = bad(v2.Code_ILLEGAL_MESSAGE_ID, "a message needs a message ID")
		case t == nil:
			e.Status = bad(v2.Code_TOPIC_NOT_FOUND, "topic '%s' does not exist", resourceKey(m.GetTopic()))
		case len(m.GetBody()) > maxBodySize:
			e.Status = bad(v2.Code_MESSAGE_BODY_TOO_LARGE, "the body has %d bytes, more than %d", len(m.GetBody()), maxBodySize)
		case sp.GetMessageType() == v2.MessageType_TRANSACTION:
			s.txnSeq++
			e.TransactionId = fmt.Sprintf("TX%016X", s.txnSeq)
			after := s.opts.TransactionCheckAfter
			if d := sp.GetOrphanedTransactionRecoveryDuration(); d != nil && d.AsDuration() > 0 {
				after = d.AsDuration()
			}
			hm := proto.Clone(m).(*v2.Message)
			t.half[e.TransactionId] = &half{msg: hm, txID: e.TransactionId, nextCheck: time.Now().Add(after)}
		default:
			_, e.Offset = s.appendLocked(t, m, -1)
		}
		if e.Status.Code != v2.Code_OK && resp.Status.Code == v2.Code_OK {
			resp.Status = e.Status
		}
		resp.Entries = append(resp.Entries, e)
	}
	return resp, nil
}

func (sv *service) QueryAssignment(ctx context.Context, req *v2.QueryAssignmentRequest) (*v2.QueryAssignmentResponse, error) {
	r, err := sv.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: req.GetTopic(), Endpoints: req.GetEndpoints()})
	if err != nil {
		return nil, err
	}
	resp := &v2.QueryAssignmentResponse{Status: r.Status}
	for _, q := range r.MessageQueues {
		resp.Assignments = append(resp.Assignments, &v2.Assignment{MessageQueue: q})
	}
	return resp, nil
}

// tagFilter returns a match function for a filter expression.
func tagFilter(f *v2.FilterExpression) (func(*v2.Message) bool, *v2.Status) {
	if f.GetType() == v2.FilterType_SQL {
		return nil, bad(v2.Code_ILLEGAL_FILTER_EXPRESSION, "SQL92 filters are not supported by this fake")
	}
	e := strings.TrimSpace(f.GetExpression())
	if e == "" || e == "*" {
		return func(*v2.Message) bool { return true }, nil
	}
	tags := map[string]bool{}
	for _, t := range strings.Split(e, "||") {
		if t = strings.TrimSpace(t); t != "" {
			tags[t] = true
		}
	}
	return func(m *v2.Message) bool { return tags[m.GetSystemProperties().GetTag()] }, nil
}

func groupKey(topicKey string, g *v2.Resource) string { return topicKey + "\x00" + resourceKey(g) }

// groupLocked returns topic t's consumption by group g.
func (s *Server) groupLocked(t *topic, g *v2.Resource) *group {
	k := groupKey(t.key, g)
	gr := s.groups[k]
	if gr == nil {
		gr = &group{inflight: map[qo]*inflight{}, attempts: map[qo]int32{}}
		s.groups[k] = gr
	}
	for len(gr.next) < len(t.queues) {
		gr.next = append(gr.next, 0)
	}
	return gr
}

func receipt(q int32, off, nonce int64) string {
	return fmt.Sprintf("%d:%d:%d", q, off, nonce)
}

func parseReceipt(h string) (qo, int64, bool) {
	p := strings.Split(h, ":")
	if len(p) != 3 {
		return qo{}, 0, false
	}
	q, e1 := strconv.ParseInt(p[0], 10, 32)
	off, e2 := strconv.ParseInt(p[1], 10, 64)
	n, e3 := strconv.ParseInt(p[2], 10, 64)
	if e1 != nil || e2 != nil || e3 != nil {
		return qo{}, 0, false
	}
	return qo{int32(q), off}, n, true
}

// deliverLocked marks message at k delivered to gr (one more attempt) and
// returns the copy to send, or nil when it went to the dead-letter topic
// instead.
func (s *Server) deliverLocked(t *topic, g *v2.Resource, gr *group, k qo, invisible time.Duration) *v2.Message {
	attempt := gr.attempts[k] + 1
	if int(attempt) > s.opts.MaxDeliveryAttempts {
		delete(gr.inflight, k)
		delete(gr.attempts, k)
		dlq := s.topicLocked(&v2.Resource{ResourceNamespace: g.GetResourceNamespace(), Name: "%DLQ%" + g.GetName()})
		if dlq != nil {
			s.appendLocked(dlq, t.queues[k.q][k.off], -1)
		}
		s.logf("rocketmq fake: message %s of topic %s went to the dead-letter topic of group %s after %d deliveries",
			t.queues[k.q][k.off].GetSystemProperties().GetMessageId(), t.key, resourceKey(g), attempt-1)
		return nil
	}
	gr.attempts[k] = attempt
	s.nonce++
	gr.inflight[k] = &inflight{deadline: time.Now().Add(invisible), nonce: s.nonce}
	m := proto.Clone(t.queues[k.q][k.off]).(*v2.Message)
	sp := m.SystemProperties
	h := receipt(k.q, k.off, s.nonce)
	sp.ReceiptHandle = &h
	sp.DeliveryAttempt = &attempt
	sp.InvisibleDuration = durationpb.New(invisible)
	sp.DeliveryTimestamp = timestamppb.Now()
	sp.BodyDigest = digest(m.Body)
	return m
}

// popLocked delivers up to n messages to group g: first those whose
// invisible time ended, then new ones, queue by queue from q0. It also
// returns when the nearest invisible time of the group ends.
func (s *Server) popLocked(t *topic, g *v2.Resource, q0 int32, n int, match func(*v2.Message) bool, invisible time.Duration) ([]*v2.Message, time.Time) {
	gr := s.groupLocked(t, g)
	now := time.Now()
	var out []*v2.Message
	var due []qo
	var next time.Time
	for k, f := range gr.inflight {
		if !f.deadline.After(now) {
			due = append(due, k)
		} else if next.IsZero() || f.deadline.Before(next) {
			next = f.deadline
		}
	}
	sortQO(due)
	for _, k := range due {
		if len(out) >= n {
			break
		}
		if m := s.deliverLocked(t, g, gr, k, invisible); m != nil {
			out = append(out, m)
		}
	}
	nq := int32(len(t.queues))
	for i := int32(0); i < nq && len(out) < n; i++ {
		q := (q0 + i) % nq
		for gr.next[q] < int64(len(t.queues[q])) && len(out) < n {
			k := qo{q, gr.next[q]}
			gr.next[q]++
			if !match(t.queues[q][k.off]) {
				continue // filtered out: consumed for this group
			}
			if m := s.deliverLocked(t, g, gr, k, invisible); m != nil {
				out = append(out, m)
			}
		}
	}
	return out, next
}

func sortQO(ks []qo) {
	slices.SortFunc(ks, func(a, b qo) int {
		if a.q != b.q {
			return cmp.Compare(a.q, b.q)
		}
		return cmp.Compare(a.off, b.off)
	})
}

// pollFor is how long a receive or pull may wait for messages: the
// wanted time, bounded by the call's deadline less a margin for the
// answer.
func pollFor(ctx context.Context, want time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - 300*time.Millisecond; left < want {
			want = left
		}
	}
	return max(want, 0)
}

func (sv *service) ReceiveMessage(req *v2.ReceiveMessageRequest, st v2.MessagingService_ReceiveMessageServer) error {
	ctx := st.Context()
	sendStatus := func(s *v2.Status) error {
		return st.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: s}})
	}
	if s := sv.auth(ctx); s != nil {
		return sendStatus(s)
	}
	s := sv.s
	if req.GetGroup().GetName() == "" {
		return sendStatus(bad(v2.Code_ILLEGAL_CONSUMER_GROUP, "a consumer group is required"))
	}
	if req.InvisibleDuration == nil || req.InvisibleDuration.AsDuration() <= 0 {
		return sendStatus(bad(v2.Code_ILLEGAL_INVISIBLE_TIME, "a simple consumer's receive needs an invisible duration"))
	}
	invisible := req.InvisibleDuration.AsDuration()
	match, fst := tagFilter(req.GetFilterExpression())
	if fst != nil {
		return sendStatus(fst)
	}
	n := int(req.GetBatchSize())
	if n <= 0 {
		n = 32
	}
	longPoll := 20 * time.Second
	if md, found := metadata.FromIncomingContext(ctx); found {
		if ids := md.Get("x-mq-client-id"); len(ids) > 0 {
			s.mu.Lock()
			if c := s.clients[ids[0]]; c != nil && c.longPoll > 0 {
				longPoll = c.longPoll
			}
			s.mu.Unlock()
		}
	}
	end := time.Now().Add(pollFor(ctx, longPoll))
	for {
		s.mu.Lock()
		t := s.topicLocked(req.GetMessageQueue().GetTopic())
		if t == nil {
			s.mu.Unlock()
			return sendStatus(bad(v2.Code_TOPIC_NOT_FOUND, "topic '%s' does not exist", resourceKey(req.GetMessageQueue().GetTopic())))
		}
		msgs, next := s.popLocked(t, req.GetGroup(), req.GetMessageQueue().GetId(), n, match, invisible)
		wait := s.appended
		s.mu.Unlock()
		if len(msgs) > 0 {
			for _, m := range msgs {
				if err := st.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}); err != nil {
					return err // what was delivered comes again after its invisible time
				}
			}
			return sendStatus(ok())
		}
		left := time.Until(end)
		if left <= 0 {
			return sendStatus(bad(v2.Code_MESSAGE_NOT_FOUND, "no new message"))
		}
		if !next.IsZero() && time.Until(next) < left {
			left = max(time.Until(next), time.Millisecond)
		}
		tm := time.NewTimer(left)
		select {
		case <-wait:
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		}
		tm.Stop()
	}
}

// handleLocked finds the message a receipt handle names, in flight for
// the group with that very handle.
func (s *Server) handleLocked(topicRes, groupRes *v2.Resource, h string) (*topic, *group, qo, *v2.Status) {
	t := s.topics[resourceKey(topicRes)]
	if t == nil {
		return nil, nil, qo{}, bad(v2.Code_TOPIC_NOT_FOUND, "topic '%s' does not exist", resourceKey(topicRes))
	}
	gr := s.groups[groupKey(t.key, groupRes)]
	k, nonce, valid := parseReceipt(h)
	if !valid {
		return nil, nil, qo{}, bad(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle '%s' is malformed", h)
	}
	if gr == nil {
		return nil, nil, qo{}, bad(v2.Code_INVALID_RECEIPT_HANDLE, "group '%s' received nothing from topic '%s'", resourceKey(groupRes), t.key)
	}
	f := gr.inflight[k]
	if f == nil || f.nonce != nonce {
		return nil, nil, qo{}, bad(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle '%s' is out of date (the message was acknowledged or delivered again)", h)
	}
	return t, gr, k, nil
}

func (sv *service) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	if st := sv.auth(ctx); st != nil {
		return &v2.AckMessageResponse{Status: st}, nil
	}
	s := sv.s
	resp := &v2.AckMessageResponse{Status: ok()}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range req.GetEntries() {
		r := &v2.AckMessageResultEntry{MessageId: e.GetMessageId(), ReceiptHandle: e.GetReceiptHandle(), Status: ok()}
		_, gr, k, st := s.handleLocked(req.GetTopic(), req.GetGroup(), e.GetReceiptHandle())
		if st != nil {
			r.Status = st
			if resp.Status.Code == v2.Code_OK {
				resp.Status = st
			}
		} else {
			delete(gr.inflight, k)
			delete(gr.attempts, k)
		}
		resp.Entries = append(resp.Entries, r)
	}
	return resp, nil
}

func (sv *service) ChangeInvisibleDuration(ctx context.Context, req *v2.ChangeInvisibleDurationRequest) (*v2.ChangeInvisibleDurationResponse, error) {
	if st := sv.auth(ctx); st != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: st}, nil
	}
	s := sv.s
	d := req.GetInvisibleDuration().AsDuration()
	if d <= 0 {
		return &v2.ChangeInvisibleDurationResponse{Status: bad(v2.Code_ILLEGAL_INVISIBLE_TIME, "the invisible duration must be positive")}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, gr, k, st := s.handleLocked(req.GetTopic(), req.GetGroup(), req.GetReceiptHandle())
	if st != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: st}, nil
	}
	s.nonce++
	gr.inflight[k] = &inflight{deadline: time.Now().Add(d), nonce: s.nonce}
	return &v2.ChangeInvisibleDurationResponse{Status: ok(), ReceiptHandle: receipt(k.q, k.off, s.nonce)}, nil
}

func (sv *service) ForwardMessageToDeadLetterQueue(ctx context.Context, req *v2.ForwardMessageToDeadLetterQueueRequest) (*v2.ForwardMessageToDeadLetterQueueResponse, error) {
	if st := sv.auth(ctx); st != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: st}, nil
	}
	s := sv.s
	s.mu.Lock()
	defer s.mu.Unlock()
	t, gr, k, st := s.handleLocked(req.GetTopic(), req.GetGroup(), req.GetReceiptHandle())
	if st != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: st}, nil
	}
	gr.attempts[k] = int32(s.opts.MaxDeliveryAttempts)
	s.deliverLocked(t, req.GetGroup(), gr, k, time.Second)
	return &v2.ForwardMessageToDeadLetterQueueResponse{Status: ok()}, nil
}

func (sv *service) EndTransaction(ctx context.Context, req *v2.EndTransactionRequest) (*v2.EndTransactionResponse, error) {
	if st := sv.auth(ctx); st != nil {
		return &v2.EndTransactionResponse{Status: st}, nil
	}
	s := sv.s
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.topics[resourceKey(req.GetTopic())]
	var h *half
	if t != nil {
		h = t.half[req.GetTransactionId()]
	}
	if h == nil && t != nil {
		if r, done := t.ended[req.GetTransactionId()]; done && (r == req.GetResolution() || req.GetResolution() == v2.TransactionResolution_TRANSACTION_RESOLUTION_UNSPECIFIED) {
			return &v2.EndTransactionResponse{Status: ok()}, nil
		}
	}
	if h == nil || h.msg.GetSystemProperties().GetMessageId() != req.GetMessageId() {
		return &v2.EndTransactionResponse{Status: bad(v2.Code_INVALID_TRANSACTION_ID,
			"no half message %s of transaction '%s' in topic '%s' (ended already, or never sent)", req.GetMessageId(), req.GetTransactionId(), resourceKey(req.GetTopic()))}, nil
	}
	switch req.GetResolution() {
	case v2.TransactionResolution_COMMIT:
		delete(t.half, h.txID)
		t.endedLocked(h.txID, v2.TransactionResolution_COMMIT)
		sp := h.msg.SystemProperties
		sp.OrphanedTransactionRecoveryDuration = nil
		s.appendLocked(t, h.msg, -1)
	case v2.TransactionResolution_ROLLBACK:
		delete(t.half, h.txID)
		t.endedLocked(h.txID, v2.TransactionResolution_ROLLBACK)
	default:
		// Unknown: asked again at the next check.
	}
	return &v2.EndTransactionResponse{Status: ok()}, nil
}

func (sv *service) Telemetry(st v2.MessagingService_TelemetryServer) error {
	ctx := st.Context()
	if s := sv.auth(ctx); s != nil {
		return status.Error(codes.Unauthenticated, s.Message)
	}
	md, _ := metadata.FromIncomingContext(ctx)
	ids := md.Get("x-mq-client-id")
	if len(ids) == 0 || ids[0] == "" {
		return status.Error(codes.InvalidArgument, "the telemetry stream needs an x-mq-client-id")
	}
	s := sv.s
	c := &client{id: ids[0], stream: st, topics: map[string]bool{}}
	s.mu.Lock()
	s.clients[c.id] = c
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.clients[c.id] == c {
			delete(s.clients, c.id)
		}
		s.mu.Unlock()
	}()
	for {
		cmd, err := st.Recv()
		if err != nil {
			return nil
		}
		set := cmd.GetSettings()
		if set == nil {
			continue // results of verifications and stack traces: nothing to do
		}
		// No metric settings and no back-off policy: the v5 Go client
		// applies them without the locks its readers take (data races
		// in the client: its meter is swapped under readers that skip
		// the lock, and its retry policy rewritten while it is being
		// marshalled for the next settings sync).
		answer := &v2.Settings{ClientType: set.ClientType, AccessPoint: set.AccessPoint, RequestTimeout: set.RequestTimeout}
		s.mu.Lock()
		c.typ = set.GetClientType()
		switch p := set.GetPubSub().(type) {
		case *v2.Settings_Publishing:
			c.topics = map[string]bool{}
			for _, r := range p.Publishing.GetTopics() {
				c.topics[resourceKey(r)] = true
			}
			answer.PubSub = &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: p.Publishing.GetTopics(), MaxBodySize: maxBodySize, ValidateMessageType: true}}
		case *v2.Settings_Subscription:
			c.longPoll = p.Subscription.GetLongPollingTimeout().AsDuration()
			fifo := false
			batch := int32(32)
			answer.PubSub = &v2.Settings_Subscription{Subscription: &v2.Subscription{Group: p.Subscription.Group,
				Subscriptions: p.Subscription.GetSubscriptions(), Fifo: &fifo, ReceiveBatchSize: &batch,
				LongPollingTimeout: p.Subscription.GetLongPollingTimeout()}}
		}
		s.mu.Unlock()
		if err := c.send(&v2.TelemetryCommand{Status: ok(), Command: &v2.TelemetryCommand_Settings{Settings: answer}}); err != nil {
			return nil
		}
	}
}

func (sv *service) NotifyClientTermination(ctx context.Context, req *v2.NotifyClientTerminationRequest) (*v2.NotifyClientTerminationResponse, error) {
	if st := sv.auth(ctx); st != nil {
		return &v2.NotifyClientTerminationResponse{Status: st}, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if ids := md.Get("x-mq-client-id"); len(ids) > 0 {
		s := sv.s
		s.mu.Lock()
		delete(s.clients, ids[0])
		s.mu.Unlock()
	}
	return &v2.NotifyClientTerminationResponse{Status: ok()}, nil
}

// PullMessage implements rmqwire.Server.
func (sv *service) PullMessage(ctx context.Context, req *rmqwire.PullMessageRequest, send func(*rmqwire.PullMessageResponse) error) error {
	sendStatus := func(st *v2.Status) error { return send(&rmqwire.PullMessageResponse{Status: st}) }
	if st := sv.auth(ctx); st != nil {
		return sendStatus(st)
	}
	match, fst := tagFilter(req.FilterExpression)
	if fst != nil {
		return sendStatus(fst)
	}
	n := int(req.BatchSize)
	if n <= 0 {
		n = 32
	}
	s := sv.s
	end := time.Now().Add(pollFor(ctx, req.LongPollingTimeout))
	q := req.MessageQueue.GetId()
	for {
		s.mu.Lock()
		t := s.topicLocked(req.MessageQueue.GetTopic())
		if t == nil {
			s.mu.Unlock()
			return sendStatus(bad(v2.Code_TOPIC_NOT_FOUND, "topic '%s' does not exist", resourceKey(req.MessageQueue.GetTopic())))
		}
		if q < 0 || int(q) >= len(t.queues) {
			s.mu.Unlock()
			return sendStatus(bad(v2.Code_BAD_REQUEST, "topic '%s' has no queue %d", t.key, q))
		}
		queue := t.queues[q]
		size := int64(len(queue))
		if req.Offset < 0 || req.Offset > size {
			s.mu.Unlock()
			return sendStatus(bad(v2.Code_BAD_REQUEST, "offset %d is out of queue %d of topic '%s' (offsets 0 to %d)", req.Offset, q, t.key, size))
		}
		var msgs []*v2.Message
		next := req.Offset
		for ; next < size && len(msgs) < n; next++ {
			if match(queue[next]) {
				msgs = append(msgs, proto.Clone(queue[next]).(*v2.Message))
			}
		}
		wait := s.appended
		s.mu.Unlock()
		left := time.Until(end)
		if len(msgs) > 0 || left <= 0 || next > req.Offset {
			for _, m := range msgs {
				sp := m.SystemProperties
				sp.BodyDigest = digest(m.Body)
				if err := send(&rmqwire.PullMessageResponse{Message: m}); err != nil {
					return err
				}
			}
			if err := send(&rmqwire.PullMessageResponse{NextOffset: next, HasNextOffset: true}); err != nil {
				return err
			}
			if len(msgs) == 0 {
				return sendStatus(bad(v2.Code_MESSAGE_NOT_FOUND, "no new message"))
			}
			return sendStatus(ok())
		}
		tm := time.NewTimer(left)
		select {
		case <-wait:
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		}
		tm.Stop()
	}
}

// QueryOffset implements rmqwire.Server.
func (sv *service) QueryOffset(ctx context.Context, req *rmqwire.QueryOffsetRequest) (*rmqwire.QueryOffsetResponse, error) {
	if st := sv.auth(ctx); st != nil {
		return &rmqwire.QueryOffsetResponse{Status: st}, nil
	}
	s := sv.s
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.topicLocked(req.MessageQueue.GetTopic())
	if t == nil {
		return &rmqwire.QueryOffsetResponse{Status: bad(v2.Code_TOPIC_NOT_FOUND, "topic '%s' does not exist", resourceKey(req.MessageQueue.GetTopic()))}, nil
	}
	q := req.MessageQueue.GetId()
	if q < 0 || int(q) >= len(t.queues) {
		return &rmqwire.QueryOffsetResponse{Status: bad(v2.Code_BAD_REQUEST, "topic '%s' has no queue %d", t.key, q)}, nil
	}
	queue := t.queues[q]
	switch req.Policy {
	case rmqwire.PolicyBeginning:
		return &rmqwire.QueryOffsetResponse{Status: ok(), Offset: 0}, nil
	case rmqwire.PolicyEnd:
		return &rmqwire.QueryOffsetResponse{Status: ok(), Offset: int64(len(queue))}, nil
	case rmqwire.PolicyTimestamp:
		if req.Timestamp == nil {
			return &rmqwire.QueryOffsetResponse{Status: bad(v2.Code_BAD_REQUEST, "a timestamp query needs a timestamp")}, nil
		}
		// The first message stored at or after the time.
		for i, m := range queue {
			if !m.GetSystemProperties().GetStoreTimestamp().AsTime().Before(*req.Timestamp) {
				return &rmqwire.QueryOffsetResponse{Status: ok(), Offset: int64(i)}, nil
			}
		}
		return &rmqwire.QueryOffsetResponse{Status: ok(), Offset: int64(len(queue))}, nil
	}
	return &rmqwire.QueryOffsetResponse{Status: bad(v2.Code_BAD_REQUEST, "unknown query offset policy %d", req.Policy)}, nil
}
