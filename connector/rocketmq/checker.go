package rocketmq

import (
	"context"
	"sync"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluicesql/sluice/internal/rmqwire"
)

// heartbeatEvery is how often the checker tells the proxy it is alive.
const heartbeatEvery = 10 * time.Second

// checker answers the proxy's transaction checks for a TxnSink, as a
// producer of the topic of its own: a telemetry stream that announces
// it, heartbeats, and EndTransaction calls with the sink's answers.
//
// The v5 client can answer checks itself (a TransactionChecker), but it
// does so in goroutines of its own whose end nothing waits for, and its
// GracefulStop then swaps state they read without a lock: a data race
// inside the client, which the race detector reports for any producer
// that answered a check before it stopped. The client's producer of a
// TxnSink therefore has no checker; a check the proxy sends it is
// logged by the client and asked again later, when it may reach this
// one.
type checker struct {
	cfg     *config
	resolve func(*v2.Message) rmq.TransactionResolution
	logf    func(format string, args ...any)
	cc      *grpc.ClientConn
	cl      v2.MessagingServiceClient
	id      rmqwire.Identity

	ctx    context.Context
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// startChecker connects and starts answering.
func startChecker(c *config, clientID string, resolve func(*v2.Message) rmq.TransactionResolution, logf func(string, ...any)) (*checker, error) {
	cc, err := rmqwire.Dial(firstEndpoint(c.endpoints))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &checker{cfg: c, resolve: resolve, logf: logf, cc: cc, cl: v2.NewMessagingServiceClient(cc),
		id: c.identityFor(clientID), ctx: ctx, cancel: cancel}
	k.done.Add(2)
	go k.telemetry()
	go k.heartbeat()
	return k, nil
}

// settings announce a producer of the table's topic.
func (k *checker) settings() *v2.TelemetryCommand {
	typ := v2.ClientType_PRODUCER
	return &v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{
		ClientType: &typ, AccessPoint: endpointsOf(k.cfg.endpoints), RequestTimeout: durationpb.New(k.cfg.reqTimeout),
		PubSub: &v2.Settings_Publishing{Publishing: &v2.Publishing{
			Topics: []*v2.Resource{{ResourceNamespace: k.cfg.namespace, Name: k.cfg.topic}}, ValidateMessageType: true}},
	}}}
}

// telemetry keeps a telemetry stream open, and answers the checks that
// come on it, until the checker closes.
func (k *checker) telemetry() {
	defer k.done.Done()
	backoff := 100 * time.Millisecond
	failed := 0
	for k.ctx.Err() == nil {
		err := k.stream()
		if k.ctx.Err() != nil {
			return
		}
		if failed++; failed == 1 || failed%20 == 0 {
			k.logf("rocketmq table '%s': the transaction checker's stream to %s ended: %v; opening it again", k.cfg.table, k.cfg.endpoints, err)
		}
		select {
		case <-time.After(backoff):
		case <-k.ctx.Done():
			return
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// stream runs one telemetry stream until it fails.
func (k *checker) stream() error {
	st, err := k.cl.Telemetry(k.id.Sign(k.ctx))
	if err != nil {
		return err
	}
	if err := st.Send(k.settings()); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		cmd, err := st.Recv()
		if err != nil {
			return err
		}
		rc := cmd.GetRecoverOrphanedTransactionCommand()
		if rc == nil {
			continue // the proxy's settings, and commands a sink has no use for
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			k.answer(rc)
		}()
	}
}

// answer ends a checked transaction as the sink resolves it; an unknown
// one is left for the proxy to ask about again.
func (k *checker) answer(rc *v2.RecoverOrphanedTransactionCommand) {
	m := rc.GetMessage()
	var r v2.TransactionResolution
	switch k.resolve(m) {
	case rmq.COMMIT:
		r = v2.TransactionResolution_COMMIT
	case rmq.ROLLBACK:
		r = v2.TransactionResolution_ROLLBACK
	default:
		return
	}
	ctx, cancel := context.WithTimeout(k.id.Sign(k.ctx), k.cfg.reqTimeout)
	defer cancel()
	resp, err := k.cl.EndTransaction(ctx, &v2.EndTransactionRequest{Topic: m.GetTopic(), MessageId: m.GetSystemProperties().GetMessageId(),
		TransactionId: rc.GetTransactionId(), Resolution: r, Source: v2.TransactionSource_SOURCE_SERVER_CHECK})
	if err == nil && resp.GetStatus().GetCode() != v2.Code_OK && resp.GetStatus().GetCode() != v2.Code_INVALID_TRANSACTION_ID {
		err = &statusError{code: int32(resp.GetStatus().GetCode()), msg: resp.GetStatus().GetMessage()}
	}
	if err != nil && k.ctx.Err() == nil {
		k.logf("rocketmq table '%s': cannot end checked transaction %s (%s): %v; the proxy will ask again", k.cfg.table, rc.GetTransactionId(), r, err)
	}
}

// heartbeat tells the proxy, now and then, that the checker lives.
func (k *checker) heartbeat() {
	defer k.done.Done()
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-k.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(k.id.Sign(k.ctx), k.cfg.reqTimeout)
		k.cl.Heartbeat(ctx, &v2.HeartbeatRequest{ClientType: v2.ClientType_PRODUCER}) // a failure shows on the stream
		cancel()
	}
}

// close stops answering.
func (k *checker) close() {
	k.cancel()
	k.done.Wait()
	k.cc.Close()
}
