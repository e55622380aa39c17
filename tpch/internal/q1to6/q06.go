package q1to6

import (
	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q6Columns = []string{"revenue"}

// q6Line is the lineitem projection of Q6 (the filter columns are read by
// the scan only).
type q6Line struct {
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
}

// Q6Row is the row of Q6 (Forecasting Revenue Change).
type Q6Row struct {
	Revenue parquet.Decimal // Σ l_extendedprice × l_discount, scale 4
	Null    bool            // no line qualified: SUM is NULL
}

// Fields implements Row.
func (r Q6Row) Fields() []string {
	if r.Null {
		return []string{""}
	}
	return []string{r.Revenue.String()}
}

// Q6 is Forecasting Revenue Change, a scan with every predicate pushed into
// the Parquet reader and one global sum:
//
//	lineitem (1994 ship dates, discount 0.05..0.07, quantity < 24, in the scan)
//	  ─AggregateAll(Σ price × discount)→ one row
func Q6(env *dataset.Env, dir string) (*query.Rows[Q6Row], error) {
	s := query.NewScanner(env, dir)
	lines := query.Scan[q6Line](s, "lineitem",
		query.Where("l_shipdate", parquet.Ge, query.Date(1994, 1, 1)),
		query.Where("l_shipdate", parquet.Lt, query.Date(1995, 1, 1)),
		query.Where("l_discount", parquet.Between, 0.05, 0.07),
		query.Where("l_quantity", parquet.Lt, 24))
	sum := dataset.AggregateAll(lines, agg.Func[q6Line, Q6Row]{
		Init:  func(l q6Line) Q6Row { return Q6Row{Revenue: l.ExtendedPrice.Mul(l.Discount)} },
		Merge: func(a, b Q6Row) Q6Row { return Q6Row{Revenue: a.Revenue.Add(b.Revenue)} },
	})
	return query.NewRows(dataset.Collect(sum), []Q6Row{{Null: true}}), s.Err()
}
