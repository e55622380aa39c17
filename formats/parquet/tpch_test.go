package parquet

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"
)

// liOracle reads lineitem with parquet-go's generic row reader: DECIMAL as
// the unscaled int64, DATE as int32 days.
type liOracle struct {
	OrderKey int64  `parquet:"l_orderkey,optional"`
	Price    int64  `parquet:"l_extendedprice,optional"`
	ShipDate int32  `parquet:"l_shipdate,optional"`
	Comment  string `parquet:"l_comment,optional"`
	Mode     string `parquet:"l_shipmode,optional"`
}

func genericRead[R any](t testing.TB, path string) []R {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := pq.NewGenericReader[R](f)
	defer r.Close()
	var out []R
	buf := make([]R, 1024)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestTPCHRowCounts(t *testing.T) {
	want := map[string]int{"lineitem": 60175, "orders": 15000, "customer": 1500, "part": 2000,
		"partsupp": 8000, "supplier": 100, "nation": 25, "region": 5}
	got := map[string]int{
		"lineitem": len(readAll[Lineitem](t, tpchDir+"/lineitem.parquet")),
		"orders":   len(readAll[Orders](t, tpchDir+"/orders.parquet")),
		"customer": len(readAll[Customer](t, tpchDir+"/customer.parquet")),
		"part":     len(readAll[Part](t, tpchDir+"/part.parquet")),
		"partsupp": len(readAll[Partsupp](t, tpchDir+"/partsupp.parquet")),
		"supplier": len(readAll[Supplier](t, tpchDir+"/supplier.parquet")),
		"nation":   len(readAll[Nation](t, tpchDir+"/nation.parquet")),
		"region":   len(readAll[Region](t, tpchDir+"/region.parquet")),
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %d rows, want %d", k, got[k], w)
		}
		if n := pqRows(t, tpchDir+"/"+k+".parquet"); int(n) != w {
			t.Errorf("%s: footer says %d rows, want %d", k, n, w)
		}
	}
}

func pqRows(t testing.TB, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := pq.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf.NumRows()
}

// TestLineitemOracle compares aggregates of several columns with
// parquet-go's generic reader, row by row.
func TestLineitemOracle(t *testing.T) {
	want := genericRead[liOracle](t, tpchDir+"/lineitem.parquet")
	for _, batch := range []int{1, 7, 1000, DefaultBatchRows} {
		src, err := Open[Lineitem](tpchDir+"/lineitem.parquet", BatchRows(batch))
		if err != nil {
			t.Fatal(err)
		}
		got := readParallel(t, src, 2)
		if len(got) != len(want) {
			t.Fatalf("batch %d: %d rows, want %d", batch, len(got), len(want))
		}
		for i := range want {
			g, w := &got[i], &want[i]
			if g.OrderKey != w.OrderKey || g.ExtendedPrice != NewDecimal(w.Price, 2) || int32(g.ShipDate) != w.ShipDate ||
				g.Comment != w.Comment || g.ShipMode != w.Mode {
				t.Fatalf("batch %d row %d: got %+v, want %+v", batch, i, *g, *w)
			}
		}
	}
	// Sums and extremes, as the brief asks, on top of the row-wise check.
	got := readAll[Lineitem](t, tpchDir+"/lineitem.parquet")
	var gk, wk, gp, wp, gl, wl int64
	gmin, gmax := Date(math.MaxInt32), Date(math.MinInt32)
	wmin, wmax := int32(math.MaxInt32), int32(math.MinInt32)
	for i := range got {
		gk += got[i].OrderKey
		gp += got[i].ExtendedPrice.Unscaled
		gl += int64(len(got[i].Comment))
		gmin, gmax = min(gmin, got[i].ShipDate), max(gmax, got[i].ShipDate)
		wk += want[i].OrderKey
		wp += want[i].Price
		wl += int64(len(want[i].Comment))
		wmin, wmax = min(wmin, want[i].ShipDate), max(wmax, want[i].ShipDate)
	}
	if gk != wk || gp != wp || gl != wl || int32(gmin) != wmin || int32(gmax) != wmax {
		t.Fatalf("sums: got %d %d %d %v %v, want %d %d %d %d %d", gk, gp, gl, gmin, gmax, wk, wp, wl, wmin, wmax)
	}
	if d, err := ParseDate(gmin.String()); err != nil || d != gmin || gmin.Time() != gmin.Time().UTC().Truncate(24*time.Hour) {
		t.Errorf("min ship date %v does not round-trip: %v %v", gmin, d, err)
	}
}

func readCSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[1:]
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 0.01 || math.Abs(a-b) <= 1e-6*math.Abs(b)
}

func parseF(t testing.TB, s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type q1Row struct {
	Quantity      Decimal `weir:"l_quantity"`
	ExtendedPrice Decimal `weir:"l_extendedprice"`
	Discount      Decimal `weir:"l_discount"`
	Tax           Decimal `weir:"l_tax"`
	ReturnFlag    string  `weir:"l_returnflag"`
	LineStatus    string  `weir:"l_linestatus"`
	ShipDate      Date    `weir:"l_shipdate"`
}

// TestTPCHQ1 computes Q1 exactly with Decimal and compares with DuckDB, at
// SF 0.01 (one row group) and, where the shared data exists, at SF 0.1 (five
// row groups of up to 122,880 rows).
func TestTPCHQ1(t *testing.T) {
	t.Run("sf0.01", func(t *testing.T) { testQ1(t, tpchDir+"/lineitem.parquet", tpchDir+"/answers/sf0.01/q01.csv") })
	t.Run("sf0.1", func(t *testing.T) {
		if _, err := os.Stat(sf01Lineitem); err != nil {
			t.Skip("no SF 0.1 data:", err)
		}
		testQ1(t, sf01Lineitem, "/work/shared/tpch/answers/sf0.1/q01.csv")
	})
}

func testQ1(t *testing.T, path, answer string) {
	cutoff := MakeDate(1998, 9, 2)
	type agg struct {
		qty, price, disc, charge, discount Decimal
		n                                  int64
	}
	groups := map[string]*agg{}
	one := NewDecimal(1, 0)
	src, err := Open[q1Row](path, Where("l_shipdate", Le, cutoff))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readParallel(t, src, 2) {
		if r.ShipDate > cutoff {
			t.Fatalf("filter let %v through", r.ShipDate)
		}
		k := r.ReturnFlag + r.LineStatus
		a := groups[k]
		if a == nil {
			a = &agg{}
			groups[k] = a
		}
		dp := r.ExtendedPrice.Mul(one.Sub(r.Discount))
		a.qty = a.qty.Add(r.Quantity)
		a.price = a.price.Add(r.ExtendedPrice)
		a.disc = a.disc.Add(dp)
		a.charge = a.charge.Add(dp.Mul(one.Add(r.Tax)))
		a.discount = a.discount.Add(r.Discount)
		a.n++
	}
	rows := readCSV(t, answer)
	if len(rows) != len(groups) {
		t.Fatalf("%d groups, want %d", len(groups), len(rows))
	}
	for _, w := range rows {
		a := groups[w[0]+w[1]]
		if a == nil {
			t.Fatalf("missing group %s%s", w[0], w[1])
		}
		n := float64(a.n)
		got := []float64{a.qty.Float64(), a.price.Float64(), a.disc.Float64(), a.charge.Float64(),
			a.qty.Float64() / n, a.price.Float64() / n, a.discount.Float64() / n, n}
		for i, g := range got {
			if want := parseF(t, w[2+i]); !near(g, want) {
				t.Errorf("group %s%s column %d: got %v, want %v", w[0], w[1], i, g, want)
			}
		}
		// Exact: DuckDB prints sum_disc_price and sum_charge with their scale.
		if a.disc.String() != w[4] || a.charge.String() != w[5] {
			t.Errorf("group %s%s: exact sums %s %s, want %s %s", w[0], w[1], a.disc, a.charge, w[4], w[5])
		}
	}
}

type q6Row struct {
	Quantity      float64 `weir:"l_quantity"`
	ExtendedPrice float64 `weir:"l_extendedprice"`
	Discount      float64 `weir:"l_discount"`
	ShipDate      Date    `weir:"l_shipdate"`
}

// TestTPCHQ6 runs Q6 twice: filtering in Go over a full scan, and through
// declared filters; both must match DuckDB, and the filtered rows must be
// exactly the rows the Go filter keeps.
func TestTPCHQ6(t *testing.T) {
	lo, hi := MakeDate(1994, 1, 1), MakeDate(1995, 1, 1)
	keep := func(r q6Row) bool {
		return r.ShipDate >= lo && r.ShipDate < hi && r.Discount >= 0.05-1e-9 && r.Discount <= 0.07+1e-9 && r.Quantity < 24
	}
	all := readAll[q6Row](t, tpchDir+"/lineitem.parquet")
	var oracle []q6Row
	var rev float64
	for _, r := range all {
		if keep(r) {
			oracle = append(oracle, r)
			rev += r.ExtendedPrice * r.Discount
		}
	}
	got := readAll[q6Row](t, tpchDir+"/lineitem.parquet",
		Where("l_shipdate", Ge, lo), Where("l_shipdate", Lt, hi.Time()),
		Where("l_discount", Between, 0.05, 0.07), Where("l_quantity", Lt, 24))
	if !slices.Equal(got, oracle) {
		t.Fatalf("filtered %d rows, oracle %d", len(got), len(oracle))
	}
	want := parseF(t, readCSV(t, tpchDir+"/answers/sf0.01/q06.csv")[0][0])
	if !near(rev, want) {
		t.Fatalf("revenue %v, want %v", rev, want)
	}
}
