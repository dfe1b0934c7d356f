package wasmudf

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/types"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// callState is what the host functions see of the call in progress. It
// reaches them through the context of the call, and refers to nothing
// that holds its instance, so that an instance no longer used can be
// collected (and its module closed).
type callState struct {
	null bool // the guest called sluice.null()
	err  error

	// Table functions.
	cols  []slot
	types []types.Type
	row   []types.Value
	emit  func([]types.Value) error
}

type stateKey struct{}

// hostFunc is one function of the "sluice" import module.
type hostFunc struct {
	params, results []api.ValueType
	fn              api.GoModuleFunc
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
	f32 = api.ValueTypeF32
	f64 = api.ValueTypeF64
)

// hostFuncs are the functions a module may import from "sluice".
var hostFuncs = map[string]hostFunc{
	// null marks the result of the current scalar call or get_value as
	// NULL.
	"null": {nil, nil, func(ctx context.Context, _ api.Module, _ []uint64) {
		ctx.Value(stateKey{}).(*callState).null = true
	}},
	// set_* set a column of the row a table function is building; emit
	// appends the row (columns left unset are NULL) and starts the next.
	"set_i32":   {[]api.ValueType{i32, i32}, nil, setWord(slotI32)},
	"set_i64":   {[]api.ValueType{i32, i64}, nil, setWord(slotI64)},
	"set_f32":   {[]api.ValueType{i32, f32}, nil, setWord(slotF32)},
	"set_f64":   {[]api.ValueType{i32, f64}, nil, setWord(slotF64)},
	"set_bytes": {[]api.ValueType{i32, i32, i32}, nil, setBytes},
	"set_null": {[]api.ValueType{i32}, nil, func(ctx context.Context, _ api.Module, stack []uint64) {
		st := ctx.Value(stateKey{}).(*callState)
		if c := st.column(uint32(stack[0]), "set_null", 0xff); c >= 0 {
			st.row[c] = types.NullValue
		}
	}},
	"emit": {nil, nil, func(ctx context.Context, _ api.Module, _ []uint64) {
		st := ctx.Value(stateKey{}).(*callState)
		if st.emit == nil {
			st.fail(errors.New("sluice.emit called outside a table function"))
		}
		if err := st.emit(st.row); err != nil {
			st.fail(err)
		}
		clear(st.row)
	}},
}

// abort is the panic value with which a host function stops the guest;
// the call then returns callState.err.
type abort struct{}

func (st *callState) fail(err error) {
	if st.err == nil {
		st.err = err
	}
	panic(abort{})
}

// column checks a set_* call against the row's schema.
func (st *callState) column(c uint32, fn string, want slot) int {
	if st.emit == nil {
		st.fail(fmt.Errorf("sluice.%s called outside a table function", fn))
	}
	if int(c) >= len(st.cols) {
		st.fail(fmt.Errorf("sluice.%s: column %d does not exist (the rows have %d)", fn, c, len(st.cols)))
	}
	if want != 0xff && st.cols[c] != want {
		st.fail(fmt.Errorf("sluice.%s: column %d is %s", fn, c, st.types[c]))
	}
	return int(c)
}

func setWord(s slot) api.GoModuleFunc {
	name := map[slot]string{slotI32: "set_i32", slotI64: "set_i64", slotF32: "set_f32", slotF64: "set_f64"}[s]
	return func(ctx context.Context, _ api.Module, stack []uint64) {
		st := ctx.Value(stateKey{}).(*callState)
		c := st.column(uint32(stack[0]), name, s)
		v, err := decode(stack[1], st.types[c])
		if err != nil {
			st.fail(fmt.Errorf("column %d: %w", c, err))
		}
		st.row[c] = v
	}
}

func setBytes(ctx context.Context, mod api.Module, stack []uint64) {
	st := ctx.Value(stateKey{}).(*callState)
	c := st.column(uint32(stack[0]), "set_bytes", slotBytes)
	b, ok := mod.Memory().Read(uint32(stack[1]), uint32(stack[2]))
	if !ok {
		st.fail(fmt.Errorf("sluice.set_bytes: [%d, +%d) is outside the memory", uint32(stack[1]), uint32(stack[2])))
	}
	st.row[c] = bytesValue(b, st.types[c])
}

func instantiateHostModule(ctx context.Context, r wazero.Runtime) error {
	b := r.NewHostModuleBuilder(hostModule)
	for name, f := range hostFuncs {
		b = b.NewFunctionBuilder().WithGoModuleFunction(f.fn, f.params, f.results).Export(name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

// instance is one instantiation of a function's module, used by one
// operator instance (one goroutine) at a time.
type instance struct {
	f     *Function
	mod   api.Module
	mem   api.Memory
	alloc api.Function
	st    *callState
	ctx   context.Context
	w     *watch
	stack []uint64

	// buf is a block of guest memory that the host owns, from
	// sluice_alloc, where arguments and accumulators are written.
	buf, bufCap uint32
}

var moduleConfig = wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize")

// instantiate makes a new instance of f's module. An instance that is no
// longer referenced closes its module when the collector finds it.
func (f *Function) instantiate() (*instance, error) {
	st := &callState{}
	in := &instance{f: f, st: st, ctx: context.WithValue(context.Background(), stateKey{}, st)}
	mod, err := f.rt.InstantiateModule(in.ctx, f.cm, moduleConfig)
	if err != nil {
		return nil, fmt.Errorf("cannot instantiate the module: %s", plainError(err))
	}
	in.mod = mod
	in.mem = mod.Memory()
	in.alloc = mod.ExportedFunction(exportAlloc)
	in.stack = make([]uint64, max(len(f.params)+2, 4))
	if f.dog != nil {
		g, ok := mod.ExportedGlobal(interruptExport).(api.MutableGlobal)
		if !ok {
			mod.Close(context.Background())
			return nil, fmt.Errorf("the instrumented module has no %s", interruptExport)
		}
		in.w = f.dog.add(g, f.spec.Limits.CallTimeout)
	}
	if f.kind == Table {
		st.cols = f.cols
		st.row = make([]types.Value, len(f.cols))
		for _, c := range f.spec.Table.Columns {
			st.types = append(st.types, c.Type)
		}
	}
	runtime.AddCleanup(in, closeModule, cleanupArg{mod, in.w, f.dog})
	return in, nil
}

type cleanupArg struct {
	mod api.Module
	w   *watch
	dog *watchdog
}

func closeModule(a cleanupArg) {
	if a.dog != nil {
		a.dog.remove(a.w)
	}
	_ = a.mod.Close(context.Background())
}

// close closes the instance now.
func (in *instance) close() {
	if in.w != nil {
		in.f.dog.remove(in.w)
	}
	_ = in.mod.Close(context.Background())
}

// call calls fn with in.stack holding n parameter words; the results are
// left at the start of in.stack.
func (in *instance) call(fn api.Function, what string) error {
	in.st.null, in.st.err = false, nil
	if in.w != nil {
		in.w.start()
	}
	err := in.callRecover(fn)
	if in.w != nil {
		in.w.done()
	}
	if err == nil {
		return nil
	}
	if in.st.err != nil {
		return in.st.err
	}
	if in.w != nil && in.w.fired.Load() {
		return fmt.Errorf("%s did not return within wasm.call-timeout (%s)", what, in.f.spec.Limits.CallTimeout)
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%s exited with code %d", what, exit.ExitCode())
	}
	return fmt.Errorf("%s trapped: %s", what, trapMessage(err))
}

func (in *instance) callRecover(fn api.Function) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(abort); !ok {
				panic(r)
			}
			err = in.st.err
		}
	}()
	return fn.CallWithStack(in.ctx, in.stack)
}

// trapMessage is wazero's message without its prefix and stack trace.
func trapMessage(err error) string {
	s := plainError(err)
	const prefix = "wasm error: "
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		s = s[len(prefix):]
	}
	return s
}

// reserve makes the host's block at least n bytes and returns its start.
func (in *instance) reserve(n uint32) (uint32, error) {
	if n <= in.bufCap {
		return in.buf, nil
	}
	size := max(n, 64, 2*in.bufCap)
	in.stack[0] = uint64(size)
	if err := in.call(in.alloc, exportAlloc); err != nil {
		return 0, err
	}
	p := uint32(in.stack[0])
	if p == 0 {
		return 0, fmt.Errorf("%s(%d) returned 0: the module is out of memory", exportAlloc, size)
	}
	if _, ok := in.mem.Read(p, size); !ok {
		return 0, fmt.Errorf("%s(%d) returned %d, outside the memory", exportAlloc, size, p)
	}
	in.buf, in.bufCap = p, size
	return p, nil
}

// readPacked reads the byte string a packed (ptr | len<<32) result names.
// The slice is a view of guest memory, valid until the next call.
func (in *instance) readPacked(w uint64, what string) ([]byte, error) {
	p, n := uint32(w), uint32(w>>32)
	b, ok := in.mem.Read(p, n)
	if !ok {
		return nil, fmt.Errorf("%s returned [%d, +%d), outside the memory", what, p, n)
	}
	return b, nil
}

// watchdog stops calls that overrun their timeout. Each instance of a
// function with a timeout has a watch: a counter that a call increments
// when it starts and when it ends. The watchdog looks at
// every watch every few milliseconds and sets the interrupt global (see
// instrument) of an instance that stayed busy in the same call for longer
// than its timeout: the call then traps at its loop's next iteration. A
// context deadline per call would cost a timer and a goroutine on every
// call.
type watchdog struct {
	mu      sync.Mutex
	watches map[*watch]struct{}
	quit    chan struct{}
	once    sync.Once
	tick    time.Duration
}

type watch struct {
	// seq counts the starts and ends of calls: odd while a call runs.
	seq       atomic.Uint64
	fired     atomic.Bool
	interrupt api.MutableGlobal
	timeout   time.Duration
	// Read by the watchdog only.
	seen  uint64
	since time.Time
}

func (w *watch) start() { w.seq.Add(1) }
func (w *watch) done()  { w.seq.Add(1) }

func newWatchdog() *watchdog {
	d := &watchdog{watches: map[*watch]struct{}{}, quit: make(chan struct{}), tick: 10 * time.Millisecond}
	go d.run()
	return d
}

func (d *watchdog) add(interrupt api.MutableGlobal, timeout time.Duration) *watch {
	w := &watch{interrupt: interrupt, timeout: timeout}
	d.mu.Lock()
	d.watches[w] = struct{}{}
	d.mu.Unlock()
	return w
}

func (d *watchdog) remove(w *watch) {
	d.mu.Lock()
	delete(d.watches, w)
	d.mu.Unlock()
}

func (d *watchdog) stop() { d.once.Do(func() { close(d.quit) }) }

func (d *watchdog) run() {
	t := time.NewTicker(d.tick)
	defer t.Stop()
	for {
		select {
		case <-d.quit:
			return
		case now := <-t.C:
			d.mu.Lock()
			for w := range d.watches {
				n := w.seq.Load()
				if n&1 == 0 || n != w.seen {
					w.seen, w.since = n, now
					continue
				}
				if now.Sub(w.since) >= w.timeout {
					w.fired.Store(true)
					w.interrupt.Set(1)
					delete(d.watches, w)
				}
			}
			d.mu.Unlock()
		}
	}
}
