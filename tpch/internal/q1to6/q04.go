package q1to6

import (
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q4Columns = []string{"o_orderpriority", "order_count"}

// q4Order is the orders projection of Q4.
type q4Order struct {
	OrderKey int64  `weir:"o_orderkey"`
	Priority string `weir:"o_orderpriority"`
}

// q4Line is the lineitem projection of Q4 (the dates are compared in the
// scan).
type q4Line struct {
	OrderKey int64 `weir:"l_orderkey"`
}

// Q4Row is a row of Q4 (Order Priority Checking).
type Q4Row struct {
	Priority string
	Count    int64
}

// Fields implements Row.
func (r Q4Row) Fields() []string { return []string{r.Priority, strconv.FormatInt(r.Count, 10)} }

// Q4 is Order Priority Checking. The EXISTS subquery is a semi-join:
//
//	orders (1993 Q3, in the scan)
//	  ─SemiJoin on orderkey─ lineitem (commit < receipt, in the scan)
//	  ─GroupBy(orderpriority).Reduce(count)→ Sort(orderpriority)
func Q4(env *dataset.Env, dir string) (*query.Rows[Q4Row], error) {
	s := query.NewScanner(env, dir)
	orders := query.Scan[q4Order](s, "orders",
		query.Where("o_orderdate", parquet.Ge, query.Date(1993, 7, 1)), query.Where("o_orderdate", parquet.Lt, query.Date(1993, 10, 1)))
	late := query.Scan[q4Line](s, "lineitem", parquet.WhereColumns("l_commitdate", parquet.Lt, "l_receiptdate"))

	waited := dataset.SemiJoin(orders, late,
		func(o q4Order) int64 { return o.OrderKey }, func(l q4Line) int64 { return l.OrderKey }).
		WithJoinHint(dataset.RepartitionHashFirst). // build the quarter's orders, whatever the parallelism
		On("orderkey").Forwards("orderkey").KeyColumns("o_orderkey", "l_orderkey")
	ones := dataset.Map(waited, func(o q4Order) Q4Row { return Q4Row{Priority: o.Priority, Count: 1} })
	priority := func(r Q4Row) string { return r.Priority }
	counts := dataset.GroupBy(ones, priority).On("orderpriority").Reduce(func(a, b Q4Row) Q4Row {
		a.Count += b.Count
		return a
	})
	sorted := dataset.Sort(counts, priority, dataset.Ascending).On("orderpriority")
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
