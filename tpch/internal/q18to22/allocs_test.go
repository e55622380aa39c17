package q18to22

import (
	"testing"

	"github.com/weirdata/weir/formats/parquet"
)

// TestPerRecordFunctionsDoNotAllocate checks the functions Q19 calls once
// per record (its filter and join function): neither allocates.
func TestPerRecordFunctionsDoNotAllocate(t *testing.T) {
	d := func(u int64) parquet.Decimal { return parquet.NewDecimal(u, 2) }
	p19 := q19Part{PartKey: 1, Brand: "Brand#23", Container: "MED PACK", Size: 7}
	x19 := q19Pair{Line: q19Line{PartKey: 1, Quantity: d(1500), ExtendedPrice: d(100000), Discount: d(5)}, Branch: 1}
	var sink19 parquet.Decimal
	emit := func(r Q19Row) { sink19 = sink19.Add(r.Revenue) }
	var n int64
	allocs := testing.AllocsPerRun(1000, func() {
		n += int64(p19.branch())
		q19Revenue(x19, emit)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per record, want 0", allocs)
	}
	// the results, so that the calls above are checked to do their work
	if sink19.Unscaled == 0 || n == 0 {
		t.Errorf("sink19 %v, n %d", sink19, n)
	}
}
