package jdbc

import (
	"slices"
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

// insertSQL returns INSERT INTO table (cols) VALUES (...), ... for n rows,
// the parameters row after row. With keys (the primary key columns,
// which cols holds) it is an upsert: a row whose key the table has
// replaces that row's other columns (ON CONFLICT (keys) DO UPDATE for
// PostgreSQL, ON DUPLICATE KEY UPDATE for MySQL).
func (d dialect) insertSQL(table string, cols, keys []string, n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	d.quote(&b, table)
	b.WriteString(" (")
	d.list(&b, cols)
	b.WriteString(") VALUES ")
	p := 1
	for j := range n {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i := range cols {
			if i > 0 {
				b.WriteString(", ")
			}
			d.placeholder(&b, p)
			p++
		}
		b.WriteByte(')')
	}
	if len(keys) == 0 {
		return b.String()
	}
	var rest []string
	for _, c := range cols {
		if !slices.Contains(keys, c) {
			rest = append(rest, c)
		}
	}
	if d == postgres {
		b.WriteString(" ON CONFLICT (")
		d.list(&b, keys)
		b.WriteByte(')')
		if len(rest) == 0 {
			b.WriteString(" DO NOTHING")
			return b.String()
		}
		b.WriteString(" DO UPDATE SET ")
		for i, c := range rest {
			if i > 0 {
				b.WriteString(", ")
			}
			d.quote(&b, c)
			b.WriteString(" = EXCLUDED.")
			d.quote(&b, c)
		}
		return b.String()
	}
	b.WriteString(" ON DUPLICATE KEY UPDATE ")
	if len(rest) == 0 {
		rest = keys[:1] // a no-op update: the row is there
	}
	for i, c := range rest {
		if i > 0 {
			b.WriteString(", ")
		}
		d.quote(&b, c)
		b.WriteString(" = VALUES(")
		d.quote(&b, c)
		b.WriteByte(')')
	}
	return b.String()
}

// deleteSQL returns the DELETE of n keys by the columns keys: WHERE k IN
// (...) for one key column, WHERE (k1, k2) IN ((...), ...) for several.
func (d dialect) deleteSQL(table string, keys []string, n int) string {
	var b strings.Builder
	b.WriteString("DELETE FROM ")
	d.quote(&b, table)
	b.WriteString(" WHERE ")
	if n == 1 {
		for i, c := range keys {
			if i > 0 {
				b.WriteString(" AND ")
			}
			d.quote(&b, c)
			b.WriteString(" = ")
			d.placeholder(&b, i+1)
		}
		return b.String()
	}
	if len(keys) > 1 {
		b.WriteByte('(')
	}
	d.list(&b, keys)
	if len(keys) > 1 {
		b.WriteByte(')')
	}
	b.WriteString(" IN (")
	p := 1
	for j := range n {
		if j > 0 {
			b.WriteString(", ")
		}
		if len(keys) > 1 {
			b.WriteByte('(')
		}
		for i := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			d.placeholder(&b, p)
			p++
		}
		if len(keys) > 1 {
			b.WriteByte(')')
		}
	}
	b.WriteByte(')')
	return b.String()
}

// list writes quoted names separated by commas.
func (d dialect) list(b *strings.Builder, names []string) {
	for i, c := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		d.quote(b, c)
	}
}
