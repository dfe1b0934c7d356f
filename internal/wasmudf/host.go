package wasmudf

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/types"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Limits bound what one instance of a function may use.
type Limits struct {
	// MemoryBytes caps an instance's linear memory ('wasm.memory-limit');
	// rounded down to whole 64 KiB pages. Zero means DefaultMemoryLimit.
	MemoryBytes int64
	// CallTimeout bounds one call into the module ('wasm.call-timeout');
	// zero turns the check off.
	CallTimeout time.Duration
}

// Defaults of the limits.
const (
	DefaultMemoryLimit = 64 << 20
	DefaultCallTimeout = 10 * time.Second
	pageSize           = 64 << 10
)

// Spec is a function as CREATE FUNCTION declares it.
type Spec struct {
	// Name is the SQL name.
	Name string
	// Export is the identifier of AS '...': the exported function of a
	// scalar or table function, the prefix of an aggregate's exports.
	Export string
	// Module is the module's binary.
	Module []byte
	// Params are the declared argument types.
	Params []types.Type
	// Result is the result type of a scalar or aggregate function.
	Result types.Type
	// Table, when it has columns, makes this a table function emitting
	// rows of this schema.
	Table types.Schema
	// CalledOnNull passes NULL arguments to the function (CALLED ON NULL
	// INPUT) with a leading i32 mask of the NULL ones; otherwise a NULL
	// argument makes the call NULL (no row for a table function, the row
	// skipped for an aggregate) without calling the module.
	CalledOnNull bool
	Limits       Limits
}

// Part names the part of a CREATE FUNCTION statement an Error is about.
type Part uint8

// The parts an error can be about.
const (
	PartModule    Part = iota // the module (USING JAR)
	PartExport                // the identifier (AS '...')
	PartSignature             // the declared signature as a whole
	PartParam                 // one parameter's type (Error.Index)
	PartResult                // the result type
	PartColumn                // one column of RETURNS TABLE (Error.Index)
)

// Error is a failure to load a function, with the part of the statement
// it is about, so that the engine can position it.
type Error struct {
	Part  Part
	Index int
	Err   error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func errorf(part Part, index int, format string, args ...any) error {
	return &Error{Part: part, Index: index, Err: fmt.Errorf(format, args...)}
}

// Host runs the WebAssembly functions of one engine. It compiles each
// module once (per memory limit and termination setting), shares the
// machine code between all functions that use the same module, and
// instantiates it once per operator instance that calls a function.
type Host struct {
	mu       sync.Mutex
	cache    wazero.CompilationCache
	runtimes map[runtimeKey]wazero.Runtime
	compiled map[compiledKey]wazero.CompiledModule
	dog      *watchdog
	closed   bool
}

type runtimeKey struct {
	pages uint32
}

type compiledKey struct {
	rt  runtimeKey
	sum [sha256.Size]byte
}

// NewHost returns a host with nothing compiled yet.
func NewHost() *Host {
	return &Host{
		cache:    wazero.NewCompilationCache(),
		runtimes: map[runtimeKey]wazero.Runtime{},
		compiled: map[compiledKey]wazero.CompiledModule{},
	}
}

// Close closes every instance and compiled module.
func (h *Host) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	if h.dog != nil {
		h.dog.stop()
	}
	ctx := context.Background()
	var errs []error
	for _, r := range h.runtimes {
		errs = append(errs, r.Close(ctx))
	}
	errs = append(errs, h.cache.Close(ctx))
	return errors.Join(errs...)
}

// The names of the exports and imports of the ABI.
const (
	exportMemory = "memory"
	exportAlloc  = "sluice_alloc"
	hostModule   = "sluice"
	wasiModule   = "wasi_snapshot_preview1"
)

// runtime returns the runtime for key, creating it with the host module
// and WASI (no files, no environment, no clock but a fake one).
func (h *Host) runtime(ctx context.Context, key runtimeKey) (wazero.Runtime, error) {
	if r, ok := h.runtimes[key]; ok {
		return r, nil
	}
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(h.cache).
		WithMemoryLimitPages(key.pages).
		WithDebugInfoEnabled(false)
	r := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
		r.Close(ctx)
		return nil, err
	}
	if err := instantiateHostModule(ctx, r); err != nil {
		r.Close(ctx)
		return nil, err
	}
	h.runtimes[key] = r
	return r, nil
}

// Load compiles (or finds compiled) the module of s, checks its exports
// against the declared signature and instantiates it once, so that a
// module that cannot run fails here rather than when a job starts.
func (h *Host) Load(ctx context.Context, s Spec) (*Function, error) {
	f := &Function{spec: s, host: h}
	if err := f.layout(); err != nil {
		return nil, err
	}
	mem := s.Limits.MemoryBytes
	if mem == 0 {
		mem = DefaultMemoryLimit
	}
	pages := mem / pageSize
	if pages < 1 || pages > 65536 {
		return nil, errorf(PartModule, 0, "wasm.memory-limit must be between 64 kb and 4 gb, got %d bytes", mem)
	}
	key := runtimeKey{pages: uint32(pages)}
	timed := s.Limits.CallTimeout > 0
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errors.New("the engine is closed")
	}
	r, err := h.runtime(ctx, key)
	if err != nil {
		h.mu.Unlock()
		return nil, errorf(PartModule, 0, "cannot start the WebAssembly runtime: %v", err)
	}
	ck := compiledKey{rt: key, sum: sha256.Sum256(s.Module)}
	cm, ok := h.compiled[ck]
	if !ok {
		// Instrumented whatever the timeout: without the loops' exits, a
		// long loop would hold up the collector, and so the process.
		bin, err := instrument(s.Module)
		if err != nil {
			h.mu.Unlock()
			return nil, errorf(PartModule, 0, "%v", err)
		}
		cm, err = r.CompileModule(ctx, bin)
		if err != nil {
			h.mu.Unlock()
			return nil, errorf(PartModule, 0, "cannot compile the module: %v", plainError(err))
		}
		h.compiled[ck] = cm
	}
	if timed && h.dog == nil {
		h.dog = newWatchdog()
	}
	f.dog = h.dog
	h.mu.Unlock()
	f.rt, f.cm = r, cm
	if err := f.check(); err != nil {
		return nil, err
	}
	inst, err := f.instantiate()
	if err != nil {
		return nil, errorf(PartModule, 0, "%v", err)
	}
	inst.close()
	return f, nil
}

// plainError keeps the first line of a wazero error (its stack trace
// follows on the next lines).
func plainError(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Kind is what a function is: scalar, table or aggregate.
type Kind uint8

// The kinds of functions.
const (
	Scalar Kind = iota
	Table
	Aggregate
)

// Function is a loaded WebAssembly function, ready to be registered.
type Function struct {
	spec Spec
	host *Host
	rt   wazero.Runtime
	cm   wazero.CompiledModule
	dog  *watchdog
	kind Kind

	args    []slot // per parameter
	result  slot   // scalar and aggregate
	cols    []slot // table columns
	needMem bool   // the host writes into guest memory
	// wasm signatures of the exports used
	params []api.ValueType

	retract, merge bool // the aggregate exports them
}

// Kind says whether f is a scalar, table or aggregate function.
func (f *Function) Kind() Kind { return f.kind }

// Name is the SQL name.
func (f *Function) Name() string { return f.spec.Name }

// layout maps the declared types to slots.
func (f *Function) layout() error {
	s := f.spec
	if s.CalledOnNull {
		f.params = append(f.params, api.ValueTypeI32)
	}
	for i, t := range s.Params {
		sl, err := slotOf(t)
		if err != nil {
			return &Error{Part: PartParam, Index: i, Err: err}
		}
		f.args = append(f.args, sl)
		f.params = sl.params(f.params)
		if sl == slotBytes {
			f.needMem = true
		}
	}
	if s.Table.Len() > 0 {
		for i, c := range s.Table.Columns {
			sl, err := slotOf(c.Type)
			if err != nil {
				return &Error{Part: PartColumn, Index: i, Err: err}
			}
			f.cols = append(f.cols, sl)
		}
		return nil
	}
	sl, err := slotOf(s.Result)
	if err != nil {
		return &Error{Part: PartResult, Err: err}
	}
	f.result = sl
	return nil
}

// Names of an aggregate's exports, after its prefix.
const (
	aggCreate     = "_create"
	aggAccumulate = "_accumulate"
	aggRetract    = "_retract"
	aggMerge      = "_merge"
	aggGetValue   = "_get_value"
)

// check finds the exports and compares their signatures with the
// declared one.
func (f *Function) check() error {
	exports := f.cm.ExportedFunctions()
	names := slices.Sorted(maps.Keys(exports))
	names = slices.DeleteFunc(names, func(n string) bool { return n == interruptExport })
	for _, imp := range f.cm.ImportedFunctions() {
		mod, name, _ := imp.Import()
		if mod != hostModule && mod != wasiModule {
			return errorf(PartModule, 0, "the module imports %s.%s: Sluice provides only the %q functions and WASI preview 1 (%s)", mod, name, hostModule, wasiModule)
		}
		if mod == hostModule {
			want, ok := hostFuncs[name]
			if !ok {
				return errorf(PartModule, 0, "the module imports %s.%s, which is not a Sluice function%s", mod, name, suggest.Hint(name, slices.Sorted(maps.Keys(hostFuncs))))
			}
			if !sameTypes(imp.ParamTypes(), want.params) || !sameTypes(imp.ResultTypes(), want.results) {
				return errorf(PartModule, 0, "the module imports %s.%s as %s; it is %s", mod, name, sig(imp.ParamTypes(), imp.ResultTypes()), sig(want.params, want.results))
			}
		}
	}
	expect := func(name string, params, results []api.ValueType) error {
		d, ok := exports[name]
		if !ok {
			return errorf(PartExport, 0, "the module exports no function '%s'%s", name, suggest.Hint(name, names))
		}
		if !sameTypes(d.ParamTypes(), params) || !sameTypes(d.ResultTypes(), results) {
			return errorf(PartSignature, 0, "export '%s' is %s, but the declared signature of %s needs %s", name, sig(d.ParamTypes(), d.ResultTypes()), f.spec.Name, sig(params, results))
		}
		return nil
	}
	x := f.spec.Export
	_, scalar := exports[x]
	_, acc := exports[x+aggAccumulate]
	switch {
	case f.spec.Table.Len() > 0:
		f.kind = Table
		if err := expect(x, f.params, nil); err != nil {
			return err
		}
	case scalar || !acc:
		f.kind = Scalar
		if !scalar {
			hint := suggest.Hint(x, names)
			if hint == "" {
				hint = suggest.Hint(x+aggAccumulate, names)
			}
			return errorf(PartExport, 0, "the module exports no function '%s' (a scalar function) nor '%s%s' (an aggregate)%s", x, x, aggAccumulate, hint)
		}
		if err := expect(x, f.params, []api.ValueType{f.result.result()}); err != nil {
			return err
		}
	default:
		f.kind = Aggregate
		f.needMem = true
		acc := []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}
		packed := []api.ValueType{api.ValueTypeI64}
		if err := expect(x+aggCreate, nil, packed); err != nil {
			return err
		}
		if err := expect(x+aggAccumulate, append(acc[:2:2], f.params...), packed); err != nil {
			return err
		}
		if err := expect(x+aggGetValue, acc, []api.ValueType{f.result.result()}); err != nil {
			return err
		}
		if _, ok := exports[x+aggRetract]; ok {
			if err := expect(x+aggRetract, append(acc[:2:2], f.params...), packed); err != nil {
				return err
			}
			f.retract = true
		}
		if _, ok := exports[x+aggMerge]; ok {
			if err := expect(x+aggMerge, append(acc[:2:2], acc...), packed); err != nil {
				return err
			}
			f.merge = true
		}
	}
	if f.needMem || f.result == slotBytes && f.kind != Table {
		if _, ok := f.cm.ExportedMemories()[exportMemory]; !ok {
			return errorf(PartModule, 0, "the module exports no memory named '%s', which strings, bytes and aggregates pass through", exportMemory)
		}
	}
	if f.kind == Table {
		for _, s := range f.cols {
			if s == slotBytes {
				if _, ok := f.cm.ExportedMemories()[exportMemory]; !ok {
					return errorf(PartModule, 0, "the module exports no memory named '%s', which strings and bytes pass through", exportMemory)
				}
			}
		}
	}
	if f.needMem {
		if err := expect(exportAlloc, []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}); err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Part = PartModule
				e.Err = fmt.Errorf("%v: the host needs it to pass strings, bytes and accumulators into the module", e.Err)
			}
			return err
		}
	}
	return nil
}
