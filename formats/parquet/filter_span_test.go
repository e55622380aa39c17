package parquet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// spanCases are integer bounds at the edges filterSpan's interval must
// handle: exclusive bounds at the ends of int64, empty ranges, one value.
func spanCases(r *rand.Rand) []bounds[int64] {
	edges := []int64{math.MinInt64, math.MinInt64 + 1, -7, -1, 0, 1, 7, 100, math.MaxInt64 - 1, math.MaxInt64}
	var out []bounds[int64]
	for _, lo := range edges {
		for _, hi := range edges {
			for flags := range 16 {
				out = append(out, bounds[int64]{lo: lo, hi: hi, hasLo: flags&1 != 0, hasHi: flags&2 != 0,
					loInc: flags&4 != 0, hiInc: flags&8 != 0})
			}
		}
	}
	for range 200 {
		lo := r.Int64N(200) - 100
		out = append(out, bounds[int64]{lo: lo, hi: lo + r.Int64N(50), hasLo: true, hasHi: true, loInc: r.IntN(2) == 0, hiInc: r.IntN(2) == 0})
	}
	return append(out, bounds[int64]{empty: true}, bounds[int64]{isSet: true, set: []int64{1, 2}})
}

// TestFilterSpan checks the branch-free range filter against bounds.match,
// row by row: every range at the ends of int64, inclusive and exclusive, on
// values that sit on and beside the bounds, with selections that already
// left rows out.
func TestFilterSpan(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	vals := []int64{math.MinInt64, math.MinInt64 + 1, math.MinInt64 + 2, -101, -100, -8, -7, -6, -1, 0, 1, 2, 6, 7, 8, 99, 100, 101,
		math.MaxInt64 - 2, math.MaxInt64 - 1, math.MaxInt64}
	for range 300 {
		vals = append(vals, r.Int64N(300)-150)
	}
	for i, b := range spanCases(r) {
		lo, hi, ok := closedInts(&b)
		if b.isSet {
			if ok {
				t.Fatalf("case %d: a set has a closed interval", i)
			}
			continue
		}
		if !ok {
			t.Fatalf("case %d: %+v has no closed interval", i, b)
		}
		for _, every := range []int{1, 3} {
			var sel []int32
			for r := 0; r < len(vals); r += every {
				sel = append(sel, int32(r))
			}
			want := filterRows(&b, vals, nil, false, slices.Clone(sel))
			got := filterSpan(lo, hi, vals, sel)
			if !slices.Equal(got, want) {
				t.Fatalf("case %d %s, every %d: rows %v, want %v", i, describeBounds(&b), every, got, want)
			}
		}
	}
}

func describeBounds(b *bounds[int64]) string {
	return fmt.Sprintf("{lo %d inc %v has %v; hi %d inc %v has %v; empty %v}", b.lo, b.loInc, b.hasLo, b.hi, b.hiInc, b.hasHi, b.empty)
}

// BenchmarkFilterInts compares the range filter of a batch with the
// generic one, at 50% of rows kept at random.
func BenchmarkFilterInts(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	vals := make([]int64, DefaultBatchRows)
	for i := range vals {
		vals[i] = r.Int64N(100)
	}
	bd := bounds[int64]{lo: 25, hi: 75, hasLo: true, hasHi: true, loInc: true}
	lo, hi, _ := closedInts(&bd)
	sel := make([]int32, len(vals))
	reset := func() {
		for i := range sel {
			sel[i] = int32(i)
		}
	}
	b.Run("span", func(b *testing.B) {
		for b.Loop() {
			reset()
			filterSpan(lo, hi, vals, sel)
		}
	})
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			reset()
			filterRows(&bd, vals, nil, false, sel)
		}
	})
}
