package parquet

import (
	"fmt"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

// selRow is written by parquet-go with small pages, so that a batch spans
// pages: dictionary and plain columns, a nullable column whose NULLs are in
// some pages only, floats, booleans and strings.
type selRow struct {
	A int64   `parquet:"a,dict"`
	B int64   `parquet:"b"`
	C string  `parquet:"c,dict"`
	E float64 `parquet:"e"`
	F float32 `parquet:"f,dict"`
	K bool    `parquet:"k"`
	N *int64  `parquet:"n,optional,dict"`
	U uint32  `parquet:"u"`
	D *string `parquet:"d,optional,dict"`
	P string  `parquet:"p"`
}

type selRead struct {
	B int64   `weir:"b"`
	C string  `weir:"c"`
	E float64 `weir:"e"`
	F float32 `weir:"f"`
	K bool    `weir:"k"`
	N *int64  `weir:"n"`
	U uint64  `weir:"u"`
	D *string `weir:"d"`
	P string  `weir:"p"`
}

// TestFilterSelectedColumns checks the columns filled for the selected rows
// only (a filter's later columns, the columns no filter reads) against the
// rows filtered in Go: filters that keep few rows, many, or none of a batch,
// batches of several sizes over pages of about 2 KiB.
func TestFilterSelectedColumns(t *testing.T) {
	rows := make([]selRow, 20000)
	for i := range rows {
		k := int64(i)
		rows[i] = selRow{A: k % 97, B: k*k - 7, C: fmt.Sprint("c", i%13), E: float64(i) / 4, F: float32(i%29) / 2,
			K: i%3 == 0, U: 1<<31 + uint32(i)}
		if i < 10000 && i%5 == 0 { // NULLs in the first half's pages only
			continue
		}
		v := k % 41
		rows[i].N = &v
	}
	for i := range rows {
		rows[i].P = fmt.Sprint("p", i%50)
		if i >= 10000 && i%4 == 0 { // NULLs in the second half's pages only
			continue
		}
		d := fmt.Sprint("d", i%7)
		rows[i].D = &d
	}
	path := writeGeneric(t, "sel.parquet", rows, pq.PageBufferSize(2048), pq.MaxRowsPerRowGroup(7000))
	for _, tc := range []struct {
		name  string
		opts  []Option
		keeps func(r *selRow) bool
	}{
		{"few", []Option{Where("a", Eq, 5)}, func(r *selRow) bool { return r.A == 5 }},
		{"two-columns", []Option{Where("a", Between, 10, 60), Where("e", Lt, 3000.0)},
			func(r *selRow) bool { return r.A >= 10 && r.A <= 60 && r.E < 3000 }},
		{"same-column", []Option{Where("a", Ge, 3), Where("a", Lt, 90), Where("u", Ge, uint32(1<<31+500))},
			func(r *selRow) bool { return r.A >= 3 && r.A < 90 && r.U >= 1<<31+500 }},
		{"nullable", []Option{Where("a", Le, 20), Where("n", Gt, 30)},
			func(r *selRow) bool { return r.A <= 20 && r.N != nil && *r.N > 30 }},
		{"a-range-of-rows", []Option{Where("b", Between, 4000*4000, 9000*9000)},
			func(r *selRow) bool { return r.B >= 4000*4000 && r.B <= 9000*9000 }},
		{"none", []Option{Where("a", Eq, 1000)}, func(*selRow) bool { return false }},
		{"strings-and-floats", []Option{Where("c", In, "c3", "c7"), Where("f", Ge, 10.0)},
			func(r *selRow) bool { return (r.C == "c3" || r.C == "c7") && r.F >= 10 }},
		// byte-array filters: by dictionary index on dictionary pages
		// (each row group's dictionary in its own order), row by row on
		// plain pages and pages with NULLs
		{"strings-after-ints", []Option{Where("a", Lt, 30), Where("c", In, "c1", "c2", "c12")},
			func(r *selRow) bool { return r.A < 30 && (r.C == "c1" || r.C == "c2" || r.C == "c12") }},
		{"same-string-column", []Option{Where("c", Ge, "c2"), Where("c", Lt, "c5")},
			func(r *selRow) bool { return r.C >= "c2" && r.C < "c5" }},
		{"nullable-strings", []Option{Where("d", In, "d1", "d5"), Where("a", Lt, 50)},
			func(r *selRow) bool { return r.D != nil && (*r.D == "d1" || *r.D == "d5") && r.A < 50 }},
		{"plain-strings", []Option{Where("p", Between, "p10", "p19")},
			func(r *selRow) bool { return r.P >= "p10" && r.P <= "p19" }},
		{"no-string", []Option{Where("c", Eq, "zz"), Where("a", Lt, 50)}, func(*selRow) bool { return false }},
		// column comparisons (WhereColumns), after the Where filters
		{"columns-lt-nullable", []Option{WhereColumns("a", Lt, "n")},
			func(r *selRow) bool { return r.N != nil && r.A < *r.N }},
		{"columns-eq-nullable", []Option{WhereColumns("a", Eq, "n")},
			func(r *selRow) bool { return r.N != nil && r.A == *r.N }},
		{"columns-after-where", []Option{WhereColumns("b", Le, "a"), Where("c", In, "c1", "c3")},
			func(r *selRow) bool { return r.B <= r.A && (r.C == "c1" || r.C == "c3") }},
		{"columns-floats", []Option{WhereColumns("e", Le, "f")},
			func(r *selRow) bool { return r.E <= float64(r.F) }},
		{"columns-strings", []Option{WhereColumns("d", Ge, "c")},
			func(r *selRow) bool { return r.D != nil && *r.D >= r.C }},
	} {
		var want []selRow
		for i := range rows {
			if tc.keeps(&rows[i]) {
				want = append(want, rows[i])
			}
		}
		for _, batch := range []int{1, 333, DefaultBatchRows} {
			t.Run(fmt.Sprintf("%s/batch=%d", tc.name, batch), func(t *testing.T) {
				got := readAll[selRead](t, path, append(tc.opts, BatchRows(batch))...)
				if len(got) != len(want) {
					t.Fatalf("%d rows, want %d", len(got), len(want))
				}
				for i, w := range want {
					g := got[i]
					if g.B != w.B || g.C != w.C || g.E != w.E || g.F != w.F || g.K != w.K || g.U != uint64(w.U) ||
						(g.N == nil) != (w.N == nil) || (g.N != nil && *g.N != *w.N) ||
						(g.D == nil) != (w.D == nil) || (g.D != nil && *g.D != *w.D) || g.P != w.P {
						t.Fatalf("row %d: got %+v, want %+v", i, g, w)
					}
				}
			})
		}
	}
}

// TestWhereColumnsErrors checks that Open refuses column comparisons it
// cannot run, naming the columns.
func TestWhereColumnsErrors(t *testing.T) {
	path := writeGeneric(t, "pairs.parquet", []selRow{{A: 1, C: "x"}})
	for _, tc := range []struct {
		opt  Option
		want string
	}{
		{WhereColumns("a", Lt, "c"), "filter a < c: the columns hold different types"},
		{WhereColumns("a", Lt, "u"), "filter a < u: the columns hold different types"},
		{WhereColumns("a", Between, "n"), "filter a BETWEEN n: WhereColumns takes"},
		{WhereColumns("a", Lt, "zz"), `filter on "zz": no such column`},
	} {
		_, err := Open[selRead](path, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("error %v, want one naming %s and saying %q", err, path, tc.want)
		}
	}
}
