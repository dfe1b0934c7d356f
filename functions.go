package sluice

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/internal/wasmudf"
	"github.com/sluicesql/sluice/planner"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/token"
)

// createWasmFunction runs CREATE FUNCTION name(arg TYPE, ...) RETURNS ...
// AS 'export' LANGUAGE WASM USING JAR 'file.wasm': it loads the module,
// checks its exports against the declared signature and registers a
// scalar, table or aggregate function by what the module exports.
func (e *Engine) createWasmFunction(ctx context.Context, p *planner.Planner, file *token.File, s *ast.CreateFunction) (Result, error) {
	fail := func(pos token.Pos, format string, args ...any) (Result, error) {
		return Result{}, token.NewError(file, pos, format, args...)
	}
	name := s.Name.Last().Name
	switch {
	case s.Language != "WASM":
		lang := s.Language
		if lang == "" {
			lang = "JAVA (the default)"
		}
		return fail(s.Signature.Pos(), "a declared signature is for LANGUAGE WASM functions; this one is LANGUAGE %s, which Sluice cannot run", lang)
	case s.Signature == nil:
		return fail(s.Name.End(), "a WASM function declares its signature: CREATE FUNCTION %s(arg TYPE, ...) RETURNS TYPE (or RETURNS TABLE (col TYPE, ...)) AS '%s' LANGUAGE WASM USING JAR 'file.wasm'", name, s.Class)
	case len(s.Using) == 0:
		return fail(s.End(), "a WASM function names its module: USING JAR 'file.wasm'")
	case len(s.Using) > 1:
		return fail(s.Using[1].Pos(), "a WASM function has one module; USING names %d", len(s.Using))
	}
	upper := strings.ToUpper(name)
	if _, err := e.funcs.Lookup(upper); err == nil || e.hasAggregate(upper) || e.hasTableFunction(upper) {
		if s.IfNotExists {
			return Result{Message: "[INFO] Execute statement succeeded."}, nil
		}
		return fail(s.Name.Pos(), "function %s already exists", name)
	}
	params, result, table, err := p.Signature(s.Signature)
	if err != nil {
		return Result{}, err
	}
	cfg := e.Config()
	mem, err := config.WasmMemory(cfg)
	if err != nil {
		return fail(s.Pos(), "%v", err)
	}
	timeout, err := config.WasmTimeout(cfg, wasmudf.DefaultCallTimeout)
	if err != nil {
		return fail(s.Pos(), "%v", err)
	}
	jar := s.Using[0]
	path, err := modulePath(jar.URI)
	if err != nil {
		return fail(jar.Pos(), "%v", err)
	}
	bin, err := readModule(path)
	if err != nil {
		return fail(jar.Pos(), "cannot read the module of function %s: %v", name, err)
	}
	f, err := e.wasm.Load(ctx, wasmudf.Spec{
		Name: upper, Export: s.Class, Module: bin,
		Params: params, Result: result, Table: table, CalledOnNull: s.Signature.CalledOnNull,
		Limits: wasmudf.Limits{MemoryBytes: mem, CallTimeout: timeout},
	})
	if err != nil {
		var le *wasmudf.Error
		if !errors.As(err, &le) {
			return fail(s.Pos(), "function %s: %v", name, err)
		}
		pos := jar.Pos()
		switch le.Part {
		case wasmudf.PartExport:
			pos = s.ClassPos
		case wasmudf.PartSignature:
			pos = s.Signature.Pos()
		case wasmudf.PartParam:
			pos = s.Signature.Params[le.Index].Type.Pos()
		case wasmudf.PartResult:
			pos = s.Signature.Returns.Pos()
		case wasmudf.PartColumn:
			pos = s.Signature.ReturnsTable[le.Index].Type.Pos()
		}
		return fail(pos, "function %s: %v", name, le.Err)
	}
	switch f.Kind() {
	case wasmudf.Scalar:
		err = e.funcs.Register(f.ScalarFunction())
	case wasmudf.Table:
		err = e.funcs.RegisterTable(f.TableFunction())
	case wasmudf.Aggregate:
		err = e.aggs.Register(f.AggregateFunction())
	}
	if err != nil {
		return fail(s.Name.Pos(), "%v", err)
	}
	e.mu.Lock()
	e.created[upper] = f.Kind()
	e.mu.Unlock()
	return Result{Message: "[INFO] Execute statement succeeded."}, nil
}

func (e *Engine) hasAggregate(name string) bool {
	return e.aggs.Has(name)
}

func (e *Engine) hasTableFunction(name string) bool {
	_, err := e.funcs.LookupTable(name)
	return err == nil
}

// maxModuleSize bounds the file a module is read from.
const maxModuleSize = 256 << 20

// readModule reads a module's file: a regular file, of a sane size (not a
// device or a pipe that never ends).
func readModule(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > maxModuleSize {
		return nil, fmt.Errorf("%s is %d bytes, more than a module may be (%d)", path, fi.Size(), maxModuleSize)
	}
	return os.ReadFile(path)
}

// modulePath turns USING JAR's URI into a file name: a file: URI or a
// plain path (relative to the working directory).
func modulePath(uri string) (string, error) {
	if !strings.Contains(uri, "://") && !strings.HasPrefix(uri, "file:") {
		return uri, nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("invalid module URI '%s': %v", uri, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("module URI '%s': Sluice reads modules from files (file:///path/udf.wasm or a plain path), not %s:", uri, u.Scheme)
	}
	if u.Path == "" {
		return u.Opaque, nil
	}
	return u.Path, nil
}

// dropFunction runs DROP FUNCTION for a function made by CREATE FUNCTION.
func (e *Engine) dropFunction(file *token.File, s *ast.Drop) (Result, error) {
	name := strings.ToUpper(s.Name.Last().Name)
	e.mu.Lock()
	kind, ok := e.created[name]
	if ok {
		delete(e.created, name)
	}
	e.mu.Unlock()
	if !ok {
		_, err := e.funcs.Lookup(name)
		if err != nil && !e.hasAggregate(name) && !e.hasTableFunction(name) {
			if s.IfExists {
				return Result{Message: "[INFO] Execute statement succeeded."}, nil
			}
			return Result{}, token.NewError(file, s.Name.Pos(), "function %s does not exist", s.Name.Last().Name)
		}
		return Result{}, token.NewError(file, s.Name.Pos(), "function %s is built in or registered from Go: DROP FUNCTION drops functions made by CREATE FUNCTION", s.Name.Last().Name)
	}
	var err error
	if kind == wasmudf.Aggregate {
		err = e.aggs.Unregister(name)
	} else {
		err = e.funcs.Unregister(name)
	}
	if err != nil {
		return Result{}, token.NewError(file, s.Name.Pos(), "%v", err)
	}
	return Result{Message: "[INFO] Execute statement succeeded."}, nil
}
