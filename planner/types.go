package planner

import (
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/types"
)

// convertType turns a written SQL type into a logical type.
func (p *Planner) convertType(t *ast.TypeExpr) (types.Type, error) {
	param := func(i, def int) int {
		if i < len(t.Params) && t.Params[i] >= 0 {
			return t.Params[i]
		}
		return def
	}
	var out types.Type
	switch t.Name {
	case "BOOLEAN":
		out = types.Boolean
	case "TINYINT":
		out = types.TinyInt
	case "SMALLINT":
		out = types.SmallInt
	case "INT", "INTEGER":
		out = types.Int
	case "BIGINT":
		out = types.BigInt
	case "FLOAT", "REAL":
		out = types.Float
	case "DOUBLE":
		out = types.Double
	case "DECIMAL", "DEC", "NUMERIC":
		prec, scale := param(0, 10), param(1, 0)
		if prec < 1 || prec > 38 {
			return out, p.errorf(t, "DECIMAL precision must be between 1 and 38, got %d", prec)
		}
		if scale < 0 || scale > prec {
			return out, p.errorf(t, "DECIMAL scale must be between 0 and the precision %d, got %d", prec, scale)
		}
		out = types.Decimal(prec, scale)
	// Without a length, CHAR and BINARY are CHAR(1) and BINARY(1), and
	// VARCHAR and VARBINARY have the largest length, the same as STRING
	// and BYTES: Flink SQL's defaults (its type system's default
	// precision), not the SQL standard's 1.
	case "CHAR":
		out = types.Char(param(0, 1))
	case "VARCHAR":
		out = types.VarChar(param(0, types.MaxLength))
	case "STRING":
		out = types.String
	case "BINARY":
		out = types.Type{Kind: types.KindBinary, Precision: param(0, 1)}
	case "VARBINARY":
		out = types.Type{Kind: types.KindVarBinary, Precision: param(0, types.MaxLength)}
	case "BYTES":
		out = types.Bytes
	case "DATE":
		out = types.Date
	case "TIME":
		out = types.Time(param(0, 0))
	case "TIMESTAMP":
		out = types.Timestamp(param(0, 6))
	case "TIMESTAMP_LTZ":
		out = types.TimestampLTZ(param(0, 6))
	case "INTERVAL":
		switch t.IntervalFrom {
		case "YEAR", "MONTH":
			out = types.IntervalYM
		default:
			out = types.IntervalDT
		}
	case "ARRAY", "MULTISET":
		if t.Elem == nil {
			return out, p.errorf(t, "%s needs an element type", t.Name)
		}
		e, err := p.convertType(t.Elem)
		if err != nil {
			return out, err
		}
		out = types.ArrayOf(e)
		if t.Name == "MULTISET" {
			out.Kind = types.KindMultiset
		}
	case "MAP":
		if t.Elem == nil || t.Value == nil {
			return out, p.errorf(t, "MAP needs a key and a value type")
		}
		k, err := p.convertType(t.Elem)
		if err != nil {
			return out, err
		}
		v, err := p.convertType(t.Value)
		if err != nil {
			return out, err
		}
		out = types.MapOf(k, v)
	case "ROW":
		fields := make([]types.Field, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := p.convertType(f.Type)
			if err != nil {
				return out, err
			}
			fields[i] = types.Field{Name: f.Name.Name, Type: ft}
		}
		out = types.RowOf(fields...)
	default:
		return out, p.errorf(t, "unknown type '%s'", t.Name)
	}
	switch t.Name {
	case "CHAR", "VARCHAR", "BINARY", "VARBINARY":
		if out.Precision < 1 {
			return out, p.errorf(t, "%s length must be between 1 and %d, got %d", t.Name, types.MaxLength, out.Precision)
		}
	}
	if (t.Name == "TIMESTAMP" || t.Name == "TIMESTAMP_LTZ" || t.Name == "TIME") && out.Precision > 9 {
		return out, p.errorf(t, "%s precision must be between 0 and 9, got %d", t.Name, out.Precision)
	}
	out.NotNull = t.NotNull
	return out, nil
}
