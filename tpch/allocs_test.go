package tpch

import (
	"testing"

	"github.com/weirdata/weir/formats/parquet"
)

// TestPerRecordFunctionsDoNotAllocate checks the functions the programs call
// once per record (maps, filters, join functions, reducers): none allocates.
func TestPerRecordFunctionsDoNotAllocate(t *testing.T) {
	d := func(u int64) parquet.Decimal { return parquet.NewDecimal(u, 2) }
	line := q1Line{ReturnFlag: "A", LineStatus: "F", Quantity: d(1700), ExtendedPrice: d(2345678), Discount: d(4), Tax: d(2)}
	l12 := q12Line{OrderKey: 1, ShipMode: "MAIL", ShipDate: 1, CommitDate: 2, ReceiptDate: 3}
	o12 := q12Order{OrderKey: 1, OrderPriority: "2-HIGH"}
	l14 := q14Line{PartKey: 1, ExtendedPrice: d(100000), Discount: d(5)}
	p14 := q14Part{PartKey: 1, Type: "PROMO BRUSHED TIN"}
	p19 := q19Part{PartKey: 1, Brand: "Brand#23", Container: "MED PACK", Size: 7}
	x19 := q19Pair{Line: q19Line{PartKey: 1, Quantity: d(1500), ExtendedPrice: d(100000), Discount: d(5)}, Branch: 1}
	var sink19 parquet.Decimal
	emit := func(r Q19Row) { sink19 = sink19.Add(r.Revenue) }
	var acc Q1Row
	var n int64
	allocs := testing.AllocsPerRun(1000, func() {
		acc = q1Merge(acc, q1Init(line))
		if q12OnTime(l12) {
			n += q12Merge(q12Count(&l12, &o12), Q12Row{ShipMode: "MAIL"}).High
		}
		s := q14Merge(q14Revenue(&l14, &p14), q14Sums{})
		n += int64(p19.branch()) + negRevenue(s.Promo)
		q19Revenue(x19, emit)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per record, want 0", allocs)
	}
	// The results, so that the calls above are checked to do their work.
	if acc.Count == 0 || acc.SumCharge.Scale != 6 || sink19.Unscaled == 0 || n == 0 {
		t.Errorf("acc %+v, sink19 %v, n %d", acc, sink19, n)
	}
}
