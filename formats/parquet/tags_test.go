package parquet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

// pqLine is a struct as a parquet-go user writes it: parquet tags only.
type pqLine struct {
	OrderKey   int64   `parquet:"l_orderkey"`
	Quantity   *int64  `parquet:"l_quantity,optional"`
	ReturnFlag string  `parquet:"l_returnflag,dict"`
	Price      float64 `parquet:"l_extendedprice"`
}

// TestParquetTags reads a file written by parquet-go into the struct it was
// written from, into a struct whose weir tags override its parquet tags, and
// checks the error for a tag naming no column.
func TestParquetTags(t *testing.T) {
	rows := make([]pqLine, 1000)
	for i := range rows {
		rows[i] = pqLine{OrderKey: int64(i*7 + 1), ReturnFlag: []string{"A", "N", "R"}[i%3], Price: float64(i) / 4}
		if i%5 != 0 {
			q := int64(i % 50)
			rows[i].Quantity = &q
		}
	}
	path := filepath.Join(t.TempDir(), "lineitem.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[pqLine](f, pq.MaxRowsPerRowGroup(300))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	got := readAll[pqLine](t, path)
	if len(got) != len(rows) {
		t.Fatalf("%d rows, want %d", len(got), len(rows))
	}
	for i, w := range rows {
		g := got[i]
		if g.OrderKey != w.OrderKey || g.ReturnFlag != w.ReturnFlag || g.Price != w.Price ||
			(g.Quantity == nil) != (w.Quantity == nil) || (g.Quantity != nil && *g.Quantity != *w.Quantity) {
			t.Fatalf("row %d: got %+v, want %+v", i, g, w)
		}
	}

	type override struct {
		Key  int64   `weir:"l_orderkey" parquet:"o_orderkey"`
		Flag string  `parquet:"l_returnflag"`
		Skip float64 `parquet:"-"`
	}
	for i, o := range readAll[override](t, path) {
		if o.Key != rows[i].OrderKey || o.Flag != rows[i].ReturnFlag || o.Skip != 0 {
			t.Fatalf("row %d: got %+v, want key %d flag %q", i, o, rows[i].OrderKey, rows[i].ReturnFlag)
		}
	}

	type bad struct {
		Key int64 `parquet:"l_partkey"`
	}
	src, err := Open[bad](path)
	if err == nil {
		_, err = readSource(src)
	}
	if err == nil || !strings.Contains(err.Error(), "lineitem.parquet") || !strings.Contains(err.Error(), `"l_partkey"`) {
		t.Errorf("bad mapping: err = %v", err)
	}
}
