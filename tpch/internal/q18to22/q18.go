package q18to22

import (
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q18Columns = []string{"c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice", "sum(l_quantity)"}

// q18Line is the lineitem projection of Q18.
type q18Line struct {
	OrderKey int64           `weir:"l_orderkey"`
	Quantity parquet.Decimal `weir:"l_quantity"`
}

// q18Order is the orders projection of Q18.
type q18Order struct {
	OrderKey   int64           `weir:"o_orderkey"`
	CustKey    int64           `weir:"o_custkey"`
	OrderDate  parquet.Date    `weir:"o_orderdate"`
	TotalPrice parquet.Decimal `weir:"o_totalprice"`
}

// q18Customer is the customer projection of Q18.
type q18Customer struct {
	CustKey int64  `weir:"c_custkey"`
	Name    string `weir:"c_name"`
}

// Q18Row is a row of Q18 (Large Volume Customer).
type Q18Row struct {
	Name       string
	CustKey    int64
	OrderKey   int64
	OrderDate  parquet.Date
	TotalPrice parquet.Decimal
	Quantity   parquet.Decimal // Σ l_quantity, scale 2
}

// Fields implements Row.
func (r Q18Row) Fields() []string {
	return []string{r.Name, strconv.FormatInt(r.CustKey, 10), strconv.FormatInt(r.OrderKey, 10),
		r.OrderDate.String(), r.TotalPrice.String(), r.Quantity.String()}
}

// q18Min is the HAVING's bound: sum(l_quantity) > 300.
var q18Min = parquet.NewDecimal(300, 0)

// q18Key orders rows by o_totalprice descending, then o_orderdate.
type q18Key struct {
	NegPrice  int64 // −o_totalprice at scale 2
	OrderDate parquet.Date
}

// Q18 is Large Volume Customer:
//
//	lineitem ─GroupBy(orderkey).Reduce(Σ quantity)─Filter(> 300)
//	  ─Join on orderkey─ orders ─Join on custkey─ customer
//	  ─Sort(totalprice desc, orderdate)─First(100)
//
// The outer query groups the lines of each order (o_orderkey = l_orderkey,
// the other grouping columns are functions of it), so its sum(l_quantity)
// is the subquery's per-order sum: the lines are summed once, and only the
// large orders (a handful) meet orders and customer.
func Q18(env *dataset.Env, dir string) (*query.Rows[Q18Row], error) {
	s := query.NewScanner(env, dir)
	lines := query.Scan[q18Line](s, "lineitem")
	orders := query.Scan[q18Order](s, "orders")
	custs := query.Scan[q18Customer](s, "customer")

	perOrder := dataset.GroupBy(lines, func(l q18Line) int64 { return l.OrderKey }).On("orderkey").Reduce(func(a, b q18Line) q18Line {
		a.Quantity = a.Quantity.Add(b.Quantity)
		return a
	})
	large := perOrder.Filter(func(l q18Line) bool { return l.Quantity.Cmp(q18Min) > 0 })
	withOrder := dataset.Join(large, orders,
		func(l q18Line) int64 { return l.OrderKey }, func(o q18Order) int64 { return o.OrderKey },
		func(l *q18Line, o *q18Order) Q18Row {
			return Q18Row{CustKey: o.CustKey, OrderKey: o.OrderKey, OrderDate: o.OrderDate, TotalPrice: o.TotalPrice,
				Quantity: l.Quantity}
		}).On("orderkey").Forwards("orderkey").KeyColumns("", "o_orderkey")
	named := dataset.Join(withOrder, custs,
		func(r Q18Row) int64 { return r.CustKey }, func(c q18Customer) int64 { return c.CustKey },
		func(r *Q18Row, c *q18Customer) Q18Row {
			out := *r
			out.Name = c.Name
			return out
		}).On("custkey").Forwards("custkey", "orderkey")
	top := dataset.Sort(named, func(r Q18Row) q18Key {
		return q18Key{-r.TotalPrice.Rescale(2).Unscaled, r.OrderDate}
	}, dataset.Ascending).First(100)
	return query.NewRows(dataset.Collect(top), nil), s.Err()
}
