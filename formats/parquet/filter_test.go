package parquet

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

type shipRow struct {
	OrderKey int64   `weir:"l_orderkey"`
	Discount Decimal `weir:"l_discount,scale=2"`
	ShipDate Date    `weir:"l_shipdate"`
	Mode     string  `weir:"l_shipmode"`
}

// sortedLineitem writes lineitem sorted by ship date in row groups of 2000
// rows, so that row group statistics can rule groups out.
func sortedLineitem(t testing.TB) (string, []shipRow) {
	rows := readAll[shipRow](t, tpchDir+"/lineitem.parquet")
	slices.SortStableFunc(rows, func(a, b shipRow) int { return int(a.ShipDate - b.ShipDate) })
	path := filepath.Join(t.TempDir(), "sorted.parquet")
	writeAll(t, path, rows, 1000, RowGroupRows(2000))
	return path, rows
}

func TestFilterSkipsRowGroups(t *testing.T) {
	path, rows := sortedLineitem(t)
	lo, hi := MakeDate(1994, 1, 1), MakeDate(1994, 12, 31)
	all, err := Open[shipRow](path)
	if err != nil {
		t.Fatal(err)
	}
	total, _ := all.Splits(context.Background())
	cases := []struct {
		name string
		opts []Option
		keep func(r shipRow) bool
	}{
		{"between", []Option{Where("l_shipdate", Between, lo, hi)}, func(r shipRow) bool { return r.ShipDate >= lo && r.ShipDate <= hi }},
		{"lt", []Option{Where("l_shipdate", Lt, lo)}, func(r shipRow) bool { return r.ShipDate < lo }},
		{"gt-time", []Option{Where("L_SHIPDATE", Gt, hi.Time())}, func(r shipRow) bool { return r.ShipDate > hi }},
		{"eq", []Option{Where("l_shipdate", Eq, lo)}, func(r shipRow) bool { return r.ShipDate == lo }},
		{"in", []Option{Where("l_shipdate", In, lo, hi, Date(0))}, func(r shipRow) bool { return r.ShipDate == lo || r.ShipDate == hi }},
		{"none", []Option{Where("l_shipdate", Lt, Date(0))}, func(r shipRow) bool { return false }},
		{"decimal-exact", []Option{Where("l_discount", Between, 0.05, 0.07), Where("l_shipdate", Ge, hi)},
			func(r shipRow) bool { return r.Discount.Unscaled >= 5 && r.Discount.Unscaled <= 7 && r.ShipDate >= hi }},
		{"decimal-frac", []Option{Where("l_discount", Gt, 0.055)}, func(r shipRow) bool { return r.Discount.Unscaled >= 6 }},
		{"string", []Option{Where("l_shipmode", In, "MAIL", "SHIP"), Where("l_orderkey", Le, 30000)},
			func(r shipRow) bool { return (r.Mode == "MAIL" || r.Mode == "SHIP") && r.OrderKey <= 30000 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := Open[shipRow](path, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			splits, _ := src.Splits(context.Background())
			got := readParallel(t, src, 2)
			var want []shipRow
			for _, r := range rows {
				if c.keep(r) {
					want = append(want, r)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			st, err := src.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d of %d row groups read, %d rows kept, stats rows %d", len(splits), len(total), len(got), st.Rows)
			if c.name == "between" || c.name == "lt" || c.name == "none" {
				if len(splits) >= len(total)/2 {
					t.Fatalf("read %d of %d row groups", len(splits), len(total))
				}
			}
		})
	}
}

// TestFilterOnlyColumn filters on a column T does not name.
func TestFilterOnlyColumn(t *testing.T) {
	var want []shipRow
	for _, r := range readAll[Lineitem](t, tpchDir+"/lineitem.parquet") {
		if r.Quantity.Cmp(NewDecimal(2, 0)) < 0 {
			want = append(want, shipRow{OrderKey: r.OrderKey, Discount: r.Discount, ShipDate: r.ShipDate, Mode: r.ShipMode})
		}
	}
	got := readAll[shipRow](t, tpchDir+"/lineitem.parquet", Where("l_quantity", Lt, 2), BatchRows(100))
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
}

func TestFilterErrors(t *testing.T) {
	for _, o := range []Option{
		Where("l_shipdate", Between, MakeDate(1994, 1, 1)),
		Where("l_shipdate", Lt, "1994-01-01"),
		Where("l_shipmode", Eq, 3),
		Where("nope", Eq, 3),
		Where("l_shipdate", Op(99), 3),
	} {
		if _, err := Open[shipRow](tpchDir+"/lineitem.parquet", o); err == nil {
			t.Error("bad filter accepted")
		} else {
			t.Log(err)
		}
	}
}

func TestStats(t *testing.T) {
	src, err := Open[shipRow](tpchDir + "/lineitem.parquet")
	if err != nil {
		t.Fatal(err)
	}
	st, err := src.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows := readAll[shipRow](t, tpchDir+"/lineitem.parquet")
	if st.Rows != int64(len(rows)) || st.Bytes <= 0 {
		t.Fatalf("stats %+v", st)
	}
	mn, mx := rows[0].ShipDate, rows[0].ShipDate
	var mk int64
	for _, r := range rows {
		mn, mx, mk = min(mn, r.ShipDate), max(mx, r.ShipDate), max(mk, r.OrderKey)
	}
	d := st.Columns["l_shipdate"]
	if d.Min != mn.Time() || d.Max != mx.Time() || d.NullCount != 0 || d.Distinct != -1 {
		t.Fatalf("l_shipdate stats %+v, want %v..%v", d, mn, mx)
	}
	if k := st.Columns["l_orderkey"]; k.Max != mk {
		t.Fatalf("l_orderkey stats %+v, want max %d", k, mk)
	}
	if _, ok := st.Columns["l_discount"].Min.(Decimal); !ok {
		t.Fatalf("l_discount min %T", st.Columns["l_discount"].Min)
	}
}

// TestFilterFloat32 compares a FLOAT column as a float32 field would.
func TestFilterFloat32(t *testing.T) {
	type f32 struct {
		V float32 `weir:"v"`
	}
	rows := []f32{{0.1}, {0.2}, {0.3}, {0.1}}
	path := filepath.Join(t.TempDir(), "f32.parquet")
	writeAll(t, path, rows, 10)
	if got := readAll[f32](t, path, Where("v", Eq, 0.1)); len(got) != 2 {
		t.Fatalf("v = 0.1 kept %v", got)
	}
	if got := readAll[f32](t, path, Where("v", Gt, 0.1)); len(got) != 2 {
		t.Fatalf("v > 0.1 kept %v", got)
	}
	if got := readAll[f32](t, path, Where("v", Between, 0.2, 0.3)); len(got) != 2 {
		t.Fatalf("v between 0.2 and 0.3 kept %v", got)
	}
}

// TestStatsMatching checks the estimate of the rows that pass the filters
// against the true count: within a factor of two for ranges on ship date and
// order key over a lineitem file in many row groups, sorted by ship date (row
// groups skipped) or in its order-key order (every row group spans all the
// dates: the estimate interpolates), and exact without filters.
func TestStatsMatching(t *testing.T) {
	sorted, rows := sortedLineitem(t)
	byOrder := readAll[shipRow](t, tpchDir+"/lineitem.parquet")
	unsorted := filepath.Join(t.TempDir(), "unsorted.parquet")
	writeAll(t, unsorted, byOrder, 1000, RowGroupRows(2000))
	for _, path := range []string{sorted, unsorted} {
		t.Run(filepath.Base(path), func(t *testing.T) { statsMatching(t, path, rows) })
	}
}

func statsMatching(t *testing.T, path string, rows []shipRow) {
	lo, hi := MakeDate(1994, 1, 1), MakeDate(1994, 12, 31)
	for _, c := range []struct {
		name string
		opts []Option
		keep func(r shipRow) bool
	}{
		{"none", nil, func(shipRow) bool { return true }},
		{"between-dates", []Option{Where("l_shipdate", Between, lo, hi)}, func(r shipRow) bool { return r.ShipDate >= lo && r.ShipDate <= hi }},
		{"lt-date", []Option{Where("l_shipdate", Lt, lo)}, func(r shipRow) bool { return r.ShipDate < lo }},
		{"ge-orderkey", []Option{Where("l_orderkey", Ge, 30000)}, func(r shipRow) bool { return r.OrderKey >= 30000 }},
		{"both", []Option{Where("l_shipdate", Lt, lo), Where("l_orderkey", Lt, 30000)}, func(r shipRow) bool { return r.ShipDate < lo && r.OrderKey < 30000 }},
		{"nothing", []Option{Where("l_shipdate", Lt, Date(0))}, func(shipRow) bool { return false }},
		// two bounds of one column are one range, not independent filters
		{"month-ge-lt", []Option{Where("l_shipdate", Ge, MakeDate(1995, 9, 1)), Where("l_shipdate", Lt, MakeDate(1995, 10, 1))},
			func(r shipRow) bool { return r.ShipDate >= MakeDate(1995, 9, 1) && r.ShipDate < MakeDate(1995, 10, 1) }},
		{"month-and-orderkey", []Option{Where("l_shipdate", Lt, MakeDate(1995, 10, 1)), Where("l_orderkey", Lt, 30000), Where("l_shipdate", Ge, MakeDate(1995, 9, 1))},
			func(r shipRow) bool {
				return r.ShipDate >= MakeDate(1995, 9, 1) && r.ShipDate < MakeDate(1995, 10, 1) && r.OrderKey < 30000
			}},
		{"disjoint-bounds", []Option{Where("l_shipdate", Lt, lo), Where("l_shipdate", Gt, hi)}, func(shipRow) bool { return false }},
	} {
		src, err := Open[shipRow](path, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		st, err := src.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, r := range rows {
			if c.keep(r) {
				want++
			}
		}
		switch {
		case want == 0 && st.Matching != 0:
			t.Errorf("%s: estimate %d rows, none match", c.name, st.Matching)
		case c.opts == nil && st.Matching != int64(want):
			t.Errorf("%s: estimate %d rows without filters, want %d", c.name, st.Matching, want)
		case want > 0 && (st.Matching < int64(want)/2 || st.Matching > int64(want)*2):
			t.Errorf("%s: estimate %d rows, %d match", c.name, st.Matching, want)
		}
	}
}
