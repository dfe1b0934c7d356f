package print

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

func TestPrint(t *testing.T) {
	schema := types.NewSchema(
		types.Column{Name: "id", Type: types.Int},
		types.Column{Name: "name", Type: types.String},
		types.Column{Name: "ts", Type: types.Timestamp(3)},
		types.Column{Name: "price", Type: types.Decimal(10, 2)},
		types.Column{Name: "tags", Type: types.ArrayOf(types.String)},
	)
	var out, errOut bytes.Buffer
	reg := connector.NewRegistry()
	if err := reg.Register(Factory{Stderr: &errOut}); err != nil {
		t.Fatal(err)
	}
	batch := types.NewBatch(2, 5)
	copy(batch.AddRow(types.Insert, types.NoOrigin, 5), []types.Value{
		types.Int32Value(1), types.StringValue("abc"), types.TimestampValue(1586937900000000),
		types.DecimalValue(150, 2), types.ArrayValue([]types.Value{types.StringValue("x"), types.StringValue("y")}),
	})
	copy(batch.AddRow(types.UpdateBefore, types.NoOrigin, 5), []types.Value{types.Int32Value(2)})
	for _, tc := range []struct {
		opts connector.Options
		w    *bytes.Buffer
		want string
	}{
		{connector.Options{}, &out,
			"+I[1, abc, 2020-04-15 08:05:00.000, 1.50, [x, y]]\n-U[2, null, null, null, null]\n"},
		{connector.Options{"print-identifier": "bids"}, &out,
			"bids> +I[1, abc, 2020-04-15 08:05:00.000, 1.50, [x, y]]\nbids> -U[2, null, null, null, null]\n"},
		{connector.Options{"standard-error": "true"}, &errOut,
			"+I[1, abc, 2020-04-15 08:05:00.000, 1.50, [x, y]]\n-U[2, null, null, null, null]\n"},
	} {
		out.Reset()
		errOut.Reset()
		tc.opts["connector"] = "print"
		s, err := reg.Sink(connector.Table{Name: "out", Schema: schema, Options: tc.opts}, connector.Env{Stdout: &out})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := tc.w.String(); got != tc.want {
			t.Errorf("%v: got\n%s\nwant\n%s", tc.opts, got, tc.want)
		}
	}
	_, err := reg.Sink(connector.Table{Name: "out", Schema: schema, Options: connector.Options{"connector": "print", "print-identifer": "x"}},
		connector.Env{Stdout: &out})
	if err == nil || !strings.Contains(err.Error(), `did you mean "print-identifier"?`) {
		t.Fatalf("err = %v", err)
	}
}
