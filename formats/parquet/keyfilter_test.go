package parquet

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

// mapKeys is a formats.KeySet over a Go map: the test's oracle of membership.
type mapKeys map[int64]bool

func (m mapKeys) Keep(vals []int64, sel []int32) []int32 {
	out := sel[:0]
	for _, r := range sel {
		if m[vals[r]] {
			out = append(out, r)
		}
	}
	return out
}

// TestReadKeys checks ReadKeys against the rows filtered in Go: a plain and a
// dictionary column, a nullable column (NULLs kept), an unsigned column,
// after a declared filter, a set that keeps nothing; batches of several sizes
// over small pages and three row groups. The removed count is checked too.
func TestReadKeys(t *testing.T) {
	rows := make([]selRow, 20000)
	for i := range rows {
		k := int64(i)
		rows[i] = selRow{A: k % 97, B: k*3 - 7, C: fmt.Sprint("c", i%13), U: 1<<31 + uint32(i)}
		if i%5 != 0 {
			v := k % 41
			rows[i].N = &v
		}
	}
	path := writeGeneric(t, "keys.parquet", rows, pq.PageBufferSize(2048), pq.MaxRowsPerRowGroup(7000))
	every := func(n int64, f func(int64) bool) mapKeys {
		m := mapKeys{}
		for v := range n {
			if f(v) {
				m[v] = true
			}
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		opts   []Option
		column string
		keys   mapKeys
		keeps  func(r *selRow) bool
	}{
		{"plain", nil, "b", mapKeys{-7: true, 293: true, 3*19999 - 7: true, 6: true},
			func(r *selRow) bool { return r.B == -7 || r.B == 293 || r.B == 3*19999-7 }},
		{"nullable-keeps-nulls", nil, "n", mapKeys{3: true, 40: true},
			func(r *selRow) bool { return r.N == nil || *r.N == 3 || *r.N == 40 }},
		{"unsigned", nil, "u", every(1<<31+20000, func(v int64) bool { return v >= 1<<31 && v%1000 == 0 }),
			func(r *selRow) bool { return r.U%1000 == 0 }},
		{"after-where", []Option{Where("c", In, "c1", "c2")}, "n", every(41, func(v int64) bool { return v%2 == 0 }),
			func(r *selRow) bool { return (r.C == "c1" || r.C == "c2") && (r.N == nil || *r.N%2 == 0) }},
		{"none", nil, "b", mapKeys{}, func(*selRow) bool { return false }},
	} {
		var want []selRow
		for i := range rows {
			if tc.keeps(&rows[i]) {
				want = append(want, rows[i])
			}
		}
		for _, batch := range []int{1, 333, DefaultBatchRows} {
			t.Run(fmt.Sprintf("%s/batch=%d", tc.name, batch), func(t *testing.T) {
				src, err := Open[selRead](path, append(tc.opts, BatchRows(batch))...)
				if err != nil {
					t.Fatal(err)
				}
				if err := src.KeyColumn(tc.column); err != nil {
					t.Fatal(err)
				}
				all := readAll[selRead](t, path, tc.opts...)
				splits, err := src.Splits(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				var got []selRead
				var removed atomic.Int64
				for _, sp := range splits {
					err := src.ReadKeys(context.Background(), sp, tc.column, tc.keys, &removed, func(b []selRead) error {
						got = append(got, b...)
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%d rows, want %d", len(got), len(want))
				}
				for i, w := range want {
					g := got[i]
					if g.B != w.B || g.C != w.C || g.U != uint64(w.U) || (g.N == nil) != (w.N == nil) || (g.N != nil && *g.N != *w.N) {
						t.Fatalf("row %d: got %+v, want %+v", i, g, w)
					}
				}
				if r := removed.Load(); r != int64(len(all)-len(want)) {
					t.Errorf("removed %d rows, want %d", r, len(all)-len(want))
				}
			})
		}
	}
}

// TestKeyColumnErrors checks that KeyColumn refuses the columns it cannot
// filter by integer keys, naming the file and the column.
func TestKeyColumnErrors(t *testing.T) {
	path := writeGeneric(t, "keycols.parquet", []selRow{{A: 1, C: "x"}})
	src, err := Open[selRead](path)
	if err != nil {
		t.Fatal(err)
	}
	for col, want := range map[string]string{
		"c":  `key column "c" is not an integer column`,
		"e":  `key column "e" is not an integer column`,
		"k":  `key column "k" is not an integer column`,
		"a":  `key column "a" is not a column the source reads`,
		"zz": `key column "zz" is not a column the source reads`,
	} {
		err := src.KeyColumn(col)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("KeyColumn(%q) = %v, want an error naming %s and saying %s", col, err, path, want)
		}
		sp, _ := src.Splits(context.Background())
		if err := src.ReadKeys(context.Background(), sp[0], col, mapKeys{}, new(atomic.Int64), func([]selRead) error { return nil }); err == nil {
			t.Errorf("ReadKeys on %q: no error", col)
		}
	}
}
