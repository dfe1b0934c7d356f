package sluice_test

import (
	"strings"
	"testing"
)

// Flink names its defaults default_catalog.default_database: a table is
// reached as t, default_database.t or default_catalog.default_database.t.
// Sluice has that one catalog and database; any other is refused where it
// is written, rather than read as the table of the same last name.
func TestCatalogAndDatabaseQualifiers(t *testing.T) {
	dir := t.TempDir()
	writeHintInputs(t, dir)
	out, err := runSQL(t, nil, dir, `
CREATE TABLE default_catalog.default_database.bids (item STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/bids.jsonl', 'format' = 'json');
SELECT b.item FROM default_database.bids AS b UNION ALL SELECT item FROM default_catalog.default_database.bids;`)
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedLines(out); strings.Join(got, "|") != "item|+I[own]|+I[own]" {
		t.Errorf("got %q", got)
	}
	for _, tc := range []struct{ sql, want string }{
		{`SELECT item FROM otherdb.bids;`,
			`test.sql:3:18: database 'otherdb' does not exist: the one database is 'default_database'`},
		{`SELECT item FROM cat.default_database.bids;`,
			`test.sql:3:18: catalog 'cat' does not exist: the one catalog is 'default_catalog'`},
		{`SELECT item FROM default_catalog.db.bids;`,
			`test.sql:3:34: database 'db' does not exist in catalog 'default_catalog'`},
		{`CREATE TABLE db2.t (a INT) WITH ('connector' = 'datagen');`,
			`test.sql:3:14: database 'db2' does not exist`},
		{`INSERT INTO db1.bids SELECT item FROM bids;`,
			`test.sql:3:13: database 'db1' does not exist`},
		{`DROP TABLE db1.bids;`,
			`test.sql:3:12: database 'db1' does not exist`},
		{`DESCRIBE db1.bids;`,
			`test.sql:3:10: database 'db1' does not exist`},
		{`SELECT item FROM default_databse.bids;`,
			`test.sql:3:18: database 'default_databse' does not exist: the one database is 'default_database' (in catalog 'default_catalog') (did you mean "default_database"?)`},
	} {
		_, err := runSQL(t, nil, dir, `
CREATE TABLE bids (item STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/bids.jsonl', 'format' = 'json');
`+tc.sql)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s\ngot  %v\nwant prefix %s", tc.sql, err, tc.want)
		}
	}
}
