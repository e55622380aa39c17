package q12to17

import (
	"testing"

	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

// TestPerRecordFunctionsDoNotAllocate checks the functions Q12 and Q14
// call once per record (join functions, reducers): none allocates.
func TestPerRecordFunctionsDoNotAllocate(t *testing.T) {
	d := func(u int64) parquet.Decimal { return parquet.NewDecimal(u, 2) }
	l12 := q12Line{OrderKey: 1, ShipMode: "MAIL"}
	o12 := q12Order{OrderKey: 1, OrderPriority: "2-HIGH"}
	l14 := q14Line{PartKey: 1, ExtendedPrice: d(100000), Discount: d(5)}
	p14 := q14Part{PartKey: 1, Type: "PROMO BRUSHED TIN"}
	var n int64
	allocs := testing.AllocsPerRun(1000, func() {
		n += q12Merge(q12Count(&l12, &o12), Q12Row{ShipMode: "MAIL"}).High
		s := q14Merge(q14Revenue(&l14, &p14), q14Sums{})
		n += query.NegRevenue(s.Promo)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per record, want 0", allocs)
	}
	// the result, so that the calls above are checked to do their work
	if n == 0 {
		t.Errorf("n %d", n)
	}
}
