package store_test

import (
	"fmt"

	"github.com/sluicesql/sluice/dim/store"
	"github.com/sluicesql/sluice/types"
)

func ExampleBuild() {
	// devices(id INT, site STRING, owner STRING), indexed by site: a key
	// that is not unique.
	cols := []types.Type{{Kind: types.KindInt}, {Kind: types.KindVarChar}, {Kind: types.KindVarChar}}
	rows := [][]types.Value{
		{types.Int32Value(1), types.StringValue("paris"), types.StringValue("ana")},
		{types.Int32Value(2), types.StringValue("lyon"), types.StringValue("bo")},
		{types.Int32Value(3), types.StringValue("paris"), types.NullValue},
		{types.Int32Value(4), types.NullValue, types.StringValue("cy")}, // never matches
	}
	ix, err := store.Build(cols, []int{1}, func(yield func([]types.Value) error) error {
		for _, r := range rows {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(ix.Rows(), "rows,", ix.Keys(), "keys,", ix.Skipped(), "skipped")

	rd := ix.NewReader() // one per goroutine
	n := rd.Lookup([]types.Value{types.StringValue("paris")}, func(row []types.Value) bool {
		owner := "NULL"
		if !row[2].IsNull() {
			owner = row[2].Str()
		}
		fmt.Println(row[0].Int(), row[1].Str(), owner)
		return true
	})
	fmt.Println(n, "rows for paris")
	// Output:
	// 3 rows, 2 keys, 1 skipped
	// 3 paris NULL
	// 1 paris ana
	// 2 rows for paris
}
