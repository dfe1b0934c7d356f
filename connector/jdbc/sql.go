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
	b.WriteString("SELECT ")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		d.quote(&b, c)
	}
	b.WriteString(" FROM ")
	d.quote(&b, table)
	for i, c := range where {
		if i == 0 {
			b.WriteString(" WHERE ")
		} else {
			b.WriteString(" AND ")
		}
		d.quote(&b, c)
		b.WriteString(" = ")
		d.placeholder(&b, i+1)
	}
	return b.String()
}
