package q1to6

import (
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q3Columns = []string{"l_orderkey", "revenue", "o_orderdate", "o_shippriority"}

// q3Customer is a BUILDING customer's key (the segment is filtered in the scan).
type q3Customer struct {
	CustKey int64 `weir:"c_custkey"`
}

// q3Order is the orders projection of Q3.
type q3Order struct {
	OrderKey     int64        `weir:"o_orderkey"`
	CustKey      int64        `weir:"o_custkey"`
	OrderDate    parquet.Date `weir:"o_orderdate"`
	ShipPriority int64        `weir:"o_shippriority"`
}

// Q3Row is a row of Q3 (Shipping Priority).
type Q3Row struct {
	OrderKey     int64
	Revenue      parquet.Decimal // Σ price × (1 − discount), scale 4
	OrderDate    parquet.Date
	ShipPriority int64
}

// Fields implements Row.
func (r Q3Row) Fields() []string {
	return []string{strconv.FormatInt(r.OrderKey, 10), r.Revenue.String(), r.OrderDate.String(),
		strconv.FormatInt(r.ShipPriority, 10)}
}

// Q3 is Shipping Priority:
//
//	orders (o_orderdate < 1995-03-15) ─SemiJoin─ customer (BUILDING), broadcast
//	lineitem (l_shipdate > 1995-03-15) ─Join on orderkey─ those orders
//	  ─GroupBy(orderkey).Reduce(Σ revenue)→ Sort(revenue desc, orderdate) ─First(10)
//
// o_orderdate and o_shippriority are functions of l_orderkey = o_orderkey,
// so grouping by the order key alone is the SQL's grouping.
func Q3(env *dataset.Env, dir string) (*query.Rows[Q3Row], error) {
	s := query.NewScanner(env, dir)
	cust := query.Scan[q3Customer](s, "customer", query.Where("c_mktsegment", parquet.Eq, "BUILDING"))
	orders := query.Scan[q3Order](s, "orders", query.Where("o_orderdate", parquet.Lt, query.Date(1995, 3, 15)))
	lines := query.Scan[query.LinePrice](s, "lineitem", query.Where("l_shipdate", parquet.Gt, query.Date(1995, 3, 15)))

	building := dataset.SemiJoin(orders, cust,
		func(o q3Order) int64 { return o.CustKey }, func(c q3Customer) int64 { return c.CustKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("custkey").Forwards("orderkey", "custkey")
	joined := dataset.Join(lines, building,
		func(l query.LinePrice) int64 { return l.OrderKey }, func(o q3Order) int64 { return o.OrderKey },
		func(l *query.LinePrice, o *q3Order) Q3Row {
			return Q3Row{OrderKey: o.OrderKey, Revenue: query.Discounted(l.ExtendedPrice, l.Discount),
				OrderDate: o.OrderDate, ShipPriority: o.ShipPriority}
		}).On("orderkey").Forwards("orderkey").KeyColumns("l_orderkey", "")
	sums := dataset.GroupBy(joined, func(r Q3Row) int64 { return r.OrderKey }).On("orderkey").Reduce(func(a, b Q3Row) Q3Row {
		a.Revenue = a.Revenue.Add(b.Revenue)
		return a
	})
	top := dataset.Sort(sums, func(r Q3Row) query.RevenueDesc[parquet.Date] {
		return query.RevenueDesc[parquet.Date]{NegRevenue: query.NegRevenue(r.Revenue), Then: r.OrderDate}
	}, dataset.Ascending).First(10)
	return query.NewRows(dataset.Collect(top), nil), s.Err()
}
