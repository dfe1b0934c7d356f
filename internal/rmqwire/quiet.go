package rmqwire

import (
	"os"
	"strings"
	"sync"
	_ "unsafe" // for go:linkname

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// clientLogger is the v5 client's process-wide logger. It has no setter
// but environment variables read once, at its package's init, whose
// default writes files under /logs/rocketmqlogs.
//
//go:linkname clientLogger github.com/apache/rocketmq-clients/golang/v5.sugarBaseLogger
var clientLogger *zap.SugaredLogger

var quietOnce sync.Once

// QuietClient tames the v5 Go client's logging, once per process, before
// a client is made: its gRPC connections log every call at INFO level to
// /tmp/rocketmq-logger.log (a line per message sent), and its own logger
// writes to files under /logs/rocketmqlogs. Calls are no longer logged,
// and the client's warnings and errors go to standard error, unless the
// client's own settings (rocketmq.client.* or mq.consoleAppender.enabled
// in the environment) say otherwise.
func QuietClient() {
	quietOnce.Do(func() {
		base := rmq.NewRpcClient
		rmq.NewRpcClient = func(target string, opts ...rmq.RpcClientOption) (rmq.RpcClient, error) {
			opts = append([]rmq.RpcClientOption{rmq.WithRpcClientConnOption(rmq.WithZapLogger(zap.NewNop()))}, opts...)
			return base(target, opts...)
		}
		for _, k := range []string{"rocketmq.client.logRoot", "rocketmq.client.logLevel", "rocketmq.client.logFileName", "mq.consoleAppender.enabled"} {
			if _, set := os.LookupEnv(k); set {
				return
			}
		}
		enc := zap.NewProductionEncoderConfig()
		enc.EncodeTime = zapcore.ISO8601TimeEncoder
		core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), zap.WarnLevel)
		clientLogger = zap.New(quietCore{core}).Named("rocketmq-client").Sugar()
	})
}

// quietCore drops the client's complaints about calls that were
// cancelled (a consumer closing cancels its long poll, and that is no
// error) and about transaction checks sent to a producer that leaves
// them to a checker of its own (the proxy asks again).
type quietCore struct{ zapcore.Core }

func (c quietCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if strings.Contains(e.Message, "context canceled") || strings.Contains(e.Message, "no transaction checker registered") {
		return ce
	}
	return c.Core.Check(e, ce)
}

func (c quietCore) With(fs []zapcore.Field) zapcore.Core { return quietCore{c.Core.With(fs)} }
