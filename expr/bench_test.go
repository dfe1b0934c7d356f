package expr

import (
	"testing"

	"github.com/sluicesql/sluice/types"
)

// benchRows returns n rows of (price DOUBLE, item STRING, qty INT, amount DECIMAL(10, 2)).
func benchRows(n int) [][]types.Value {
	rows := make([][]types.Value, n)
	items := []string{"apple", "banana", "avocado", "cherry"}
	for i := range rows {
		rows[i] = []types.Value{
			types.DoubleValue(float64(i%20) + 0.5),
			types.StringValue(items[i%len(items)]),
			types.Int32Value(int32(i % 100)),
			types.DecimalValue(int64(i%10000), 2),
		}
	}
	return rows
}

var (
	bPrice  = &Column{Index: 0, Name: "price", T: types.Double}
	bItem   = &Column{Index: 1, Name: "item", T: types.String}
	bQty    = &Column{Index: 2, Name: "qty", T: types.Int}
	bAmount = &Column{Index: 3, Name: "amount", T: types.Decimal(10, 2)}
)

func benchPredicate(b *testing.B, build func(k *kit) Node) {
	k := newKit()
	n := build(k)
	if bad, ok := n.(*badNode); ok {
		b.Fatal(bad.err)
	}
	p, err := CompilePredicate(n, nil)
	if err != nil {
		b.Fatal(err)
	}
	rows := benchRows(1024)
	b.ReportAllocs()
	b.ResetTimer()
	hits := 0
	for i := 0; b.Loop(); i++ {
		ok, _ := p(rows[i&1023])
		if ok {
			hits++
		}
	}
	_ = hits
}

func BenchmarkPredicate(b *testing.B) {
	b.Run("price*2>10", func(b *testing.B) {
		benchPredicate(b, func(k *kit) Node { return k.call(">", k.call("*", bPrice, I(2)), I(10)) })
	})
	b.Run("qty>=50", func(b *testing.B) {
		benchPredicate(b, func(k *kit) Node { return k.call(">=", bQty, I(50)) })
	})
	b.Run("price*2>10_AND_item_LIKE_a%", func(b *testing.B) {
		benchPredicate(b, func(k *kit) Node {
			return k.call("AND", k.call(">", k.call("*", bPrice, I(2)), I(10)), k.call("LIKE", bItem, S("a%")))
		})
	})
	b.Run("amount*2>10.5_AND_qty_IN", func(b *testing.B) {
		benchPredicate(b, func(k *kit) Node {
			return k.call("AND", k.call(">", k.call("*", bAmount, I(2)), Dec("10.5")),
				k.call("IN", bQty, I(1), I(5), I(7), I(42), I(99)))
		})
	})
	b.Run("item_LIKE_%an%", func(b *testing.B) {
		benchPredicate(b, func(k *kit) Node { return k.call("LIKE", bItem, S("%an%")) })
	})
	b.Run("REGEXP", func(b *testing.B) {
		benchPredicate(b, func(k *kit) Node { return k.call("REGEXP", bItem, S("^a.*o$")) })
	})
}

func BenchmarkProjection(b *testing.B) {
	k := newKit()
	exprs := map[string]Node{
		"price*qty+1":    k.call("+", k.call("*", bPrice, bQty), I(1)),
		"amount*qty":     k.call("*", bAmount, bQty),
		"UPPER(item)":    k.call("UPPER", bItem),
		"CASE":           k.caseOf(nil, []Node{k.call(">", bQty, I(50)), S("high")}, S("low")),
		"CAST_AS_BIGINT": k.cast(bQty, types.BigInt),
		"SPLIT_INDEX":    k.call("SPLIT_INDEX", bItem, S("a"), I(1)),
	}
	rows := benchRows(1024)
	for name, n := range exprs {
		b.Run(name, func(b *testing.B) {
			e, err := Compile(n, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, _ = e(rows[i&1023])
			}
		})
	}
}
