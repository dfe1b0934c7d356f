package jdbc

import (
	"strconv"
	"strings"
)

// quote quotes an identifier: "name" for PostgreSQL, `name` for MySQL. A
// dotted table name (schema.table) is quoted part by part.
func (d dialect) quote(b *strings.Builder, name string) {
	q := byte('"')
	if d == mySQL {
		q = '`'
	}
	for i, part := range strings.Split(name, ".") {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteByte(q)
		b.WriteString(strings.ReplaceAll(part, string(q), string([]byte{q, q})))
		b.WriteByte(q)
	}
}

// placeholder writes the n-th (from 1) statement parameter.
func (d dialect) placeholder(b *strings.Builder, n int) {
	if d == postgres {
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		return
	}
	b.WriteByte('?')
}

// selectSQL returns SELECT cols FROM table [WHERE where[0] = ? AND ...].
func (d dialect) selectSQL(table string, cols, where []string) string {
	var b strings.Builder
	d.writeSelect(&b, "", table, cols, where, 1)
	return b.String()
}

// batchSQL returns the lookup of n keys by the columns where in one
// statement: for each key, the SELECT that selectSQL would make, led by
// the key's position (0, 1, ...), all joined by UNION ALL. Each key
// matches exactly the rows its own statement would (whatever the
// collations), in one round trip. The parameters are the keys' values,
// key after key.
func (d dialect) batchSQL(table string, cols, where []string, n int) string {
	var b strings.Builder
	for j := range n {
		if j > 0 {
			b.WriteString(" UNION ALL ")
		}
		d.writeSelect(&b, strconv.Itoa(j), table, cols, where, 1+j*len(where))
	}
	return b.String()
}

// writeSelect writes SELECT [lead, ]cols FROM table [WHERE w1 = p AND
// ...], numbering the parameters from param.
func (d dialect) writeSelect(b *strings.Builder, lead, table string, cols, where []string, param int) {
	b.WriteString("SELECT ")
	if lead != "" {
		b.WriteString(lead)
		b.WriteString(", ")
	}
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		d.quote(b, c)
	}
	b.WriteString(" FROM ")
	d.quote(b, table)
	for i, c := range where {
		if i == 0 {
			b.WriteString(" WHERE ")
		} else {
			b.WriteString(" AND ")
		}
		d.quote(b, c)
		b.WriteString(" = ")
		d.placeholder(b, param+i)
	}
}
