package q1to6

import (
	"testing"

	"github.com/weirdata/weir/formats/parquet"
)

// TestPerRecordFunctionsDoNotAllocate checks the functions Q1 calls once
// per record (its key and its fold): neither allocates.
func TestPerRecordFunctionsDoNotAllocate(t *testing.T) {
	d := func(u int64) parquet.Decimal { return parquet.NewDecimal(u, 2) }
	line := q1Line{ReturnFlag: "A", LineStatus: "F", Quantity: d(1700), ExtendedPrice: d(2345678), Discount: d(4), Tax: d(2)}
	var acc Q1Row
	allocs := testing.AllocsPerRun(1000, func() {
		if k := q1LineKey(line); k.ReturnFlag == "A" {
			q1Fold(&acc, line)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per record, want 0", allocs)
	}
	// the result, so that the calls above are checked to do their work
	if acc.Count < 1000 || acc.ReturnFlag != "A" || acc.SumCharge.Scale != 6 {
		t.Errorf("acc %+v", acc)
	}
}
