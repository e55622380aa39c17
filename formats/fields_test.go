package formats

import (
	"strings"
	"testing"
	"time"
)

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"OrderKey": "order_key", "LShipDate": "l_ship_date", "HTTPCode": "http_code",
		"ID": "id", "Price2": "price2", "A": "a", "shipDate": "ship_date", "LOrderkey": "l_orderkey",
	} {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

type row struct {
	OrderKey int64     `weir:"o_orderkey"`
	Price    float64   // matched case-insensitively
	ShipDate time.Time // matched as ship_date
	Skipped  string    `weir:"-"`
	hidden   int
}

func TestFieldsAndResolve(t *testing.T) {
	fs, err := Fields[row]()
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 3 || fs[0].Column != "o_orderkey" || !fs[0].Tagged || fs[1].Column != "Price" || fs[2].GoName != "ShipDate" {
		t.Fatalf("fields = %+v", fs)
	}
	idx, err := Resolve(fs, []string{"ship_date", "PRICE", "o_orderkey", "extra"}, "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	if idx[0] != 2 || idx[1] != 1 || idx[2] != 0 {
		t.Errorf("idx = %v", idx)
	}
	_, err = Resolve(fs, []string{"price"}, "t.csv")
	if err == nil || !strings.Contains(err.Error(), "t.csv") || !strings.Contains(err.Error(), `OrderKey (column "o_orderkey")`) ||
		!strings.Contains(err.Error(), "ShipDate") {
		t.Errorf("missing columns: err = %v", err)
	}
	_ = row{}.hidden
}

func TestFieldsErrors(t *testing.T) {
	type dup struct {
		A int `weir:"x"`
		B int `weir:"X"`
	}
	if _, err := Fields[dup](); err == nil || !strings.Contains(err.Error(), "both map to column") {
		t.Errorf("duplicate column: err = %v", err)
	}
	if _, err := Fields[int](); err == nil {
		t.Error("int: no error")
	}
	type none struct{ a int }
	if _, err := Fields[none](); err == nil {
		t.Error("no exported fields: no error")
	}
	_ = none{}.a
}

func TestFieldsParquetTags(t *testing.T) {
	type tagged struct {
		Key   int64  `parquet:"l_orderkey"`
		Flag  string `parquet:"l_returnflag,optional,dict"`
		Both  int    `weir:"w_name" parquet:"p_name"`
		Opts  int    `weir:",scale=3" parquet:"p_opts"`
		Skip  string `parquet:"-"`
		Kept  string `weir:"kept" parquet:"-"`
		Plain float64
	}
	fs, err := Fields[tagged]()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.Column+"/"+f.Opts)
		if f.Tagged != (f.GoName != "Plain") {
			t.Errorf("%s: Tagged = %v", f.GoName, f.Tagged)
		}
	}
	want := "l_orderkey/ l_returnflag/ w_name/ p_opts/scale=3 kept/ Plain/"
	if strings.Join(got, " ") != want {
		t.Errorf("columns = %q, want %q", strings.Join(got, " "), want)
	}
	_, err = Resolve(fs, []string{"l_orderkey", "w_name", "p_opts", "kept", "plain"}, "lineitem.parquet")
	if err == nil || !strings.Contains(err.Error(), "lineitem.parquet") || !strings.Contains(err.Error(), `"l_returnflag"`) {
		t.Errorf("missing column: err = %v", err)
	}
}
