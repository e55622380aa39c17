package q12to17

import (
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q12Columns = []string{"l_shipmode", "high_line_count", "low_line_count"}

// q12Line is the lineitem projection of Q12 (the dates are compared in the
// scan).
type q12Line struct {
	OrderKey int64  `weir:"l_orderkey"`
	ShipMode string `weir:"l_shipmode"`
}

// q12Order is the orders projection of Q12.
type q12Order struct {
	OrderKey      int64  `weir:"o_orderkey"`
	OrderPriority string `weir:"o_orderpriority"`
}

// Q12Row is a row of Q12 (Shipping Modes and Order Priority).
type Q12Row struct {
	ShipMode string
	High     int64 // lines of 1-URGENT and 2-HIGH orders
	Low      int64 // lines of other orders
}

// Fields implements Row.
func (r Q12Row) Fields() []string {
	return []string{r.ShipMode, strconv.FormatInt(r.High, 10), strconv.FormatInt(r.Low, 10)}
}

// q12Count counts a line of an order as high or low priority.
func q12Count(l *q12Line, o *q12Order) Q12Row {
	if o.OrderPriority == "1-URGENT" || o.OrderPriority == "2-HIGH" {
		return Q12Row{ShipMode: l.ShipMode, High: 1}
	}
	return Q12Row{ShipMode: l.ShipMode, Low: 1}
}

// q12Merge adds the counts of a ship mode.
func q12Merge(a, b Q12Row) Q12Row {
	a.High += b.High
	a.Low += b.Low
	return a
}

// Q12 is Shipping Modes and Order Priority:
//
//	lineitem (MAIL or SHIP, received in 1994, commit < receipt, ship < commit:
//	          all in the scan) ─Join on orderkey─ orders
//	  ─GroupBy(shipmode).Reduce(counts)→ Sort(shipmode)
func Q12(env *dataset.Env, dir string) (*query.Rows[Q12Row], error) {
	s := query.NewScanner(env, dir)
	lines := query.Scan[q12Line](s, "lineitem",
		query.Where("l_shipmode", parquet.In, "MAIL", "SHIP"),
		query.Where("l_receiptdate", parquet.Ge, query.Date(1994, 1, 1)),
		query.Where("l_receiptdate", parquet.Lt, query.Date(1995, 1, 1)),
		parquet.WhereColumns("l_commitdate", parquet.Lt, "l_receiptdate"),
		parquet.WhereColumns("l_shipdate", parquet.Lt, "l_commitdate"))
	orders := query.Scan[q12Order](s, "orders")

	counted := dataset.Join(lines, orders,
		func(l q12Line) int64 { return l.OrderKey }, func(o q12Order) int64 { return o.OrderKey },
		q12Count).On("orderkey").KeyColumns("l_orderkey", "o_orderkey")
	mode := func(r Q12Row) string { return r.ShipMode }
	sums := dataset.GroupBy(counted, mode).On("shipmode").Reduce(q12Merge)
	return query.NewRows(dataset.Collect(dataset.Sort(sums, mode, dataset.Ascending).On("shipmode")), nil), s.Err()
}
