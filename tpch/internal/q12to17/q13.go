package q12to17

import (
	"strconv"
	"strings"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q13Columns = []string{"c_count", "custdist"}

// q13Customer is a customer's key.
type q13Customer struct {
	CustKey int64 `weir:"c_custkey"`
}

// q13Order is the orders projection of Q13.
type q13Order struct {
	CustKey int64  `weir:"o_custkey"`
	Comment string `weir:"o_comment"`
}

// q13Orders is a customer's number of orders.
type q13Orders struct {
	CustKey int64
	Count   int64
}

// Q13Row is a row of Q13 (Customer Distribution).
type Q13Row struct {
	Count int64 // c_count: orders per customer
	Dist  int64 // custdist: customers with that many orders
}

// Fields implements Row.
func (r Q13Row) Fields() []string {
	return []string{strconv.FormatInt(r.Count, 10), strconv.FormatInt(r.Dist, 10)}
}

// q13Counted is the SQL's o_comment NOT LIKE '%special%requests%': the order
// counts unless "requests" follows "special" in its comment.
func q13Counted(o q13Order) bool {
	i := strings.Index(o.Comment, "special")
	return i < 0 || !strings.Contains(o.Comment[i+len("special"):], "requests")
}

// Q13 is Customer Distribution:
//
//	orders (comment NOT LIKE '%special%requests%': Filter)
//	  ─GroupBy(custkey).Reduce(count)
//	customer ─LeftOuterJoin on custkey─ those counts (0 without a match)
//	  ─GroupBy(c_count).Reduce(count)─SortBy(custdist desc, c_count desc)
//
// count(o_orderkey) over the outer join counts a customer's matching orders
// (0 for a customer without one), so the orders are counted per customer
// before the join: the join then sees one record per customer on each side.
func Q13(env *dataset.Env, dir string) (*query.Rows[Q13Row], error) {
	s := query.NewScanner(env, dir)
	custs := query.Scan[q13Customer](s, "customer")
	orders := query.Scan[q13Order](s, "orders").Filter(q13Counted)

	ones := dataset.Map(orders, func(o q13Order) q13Orders { return q13Orders{CustKey: o.CustKey, Count: 1} }).
		Forwards("custkey")
	perCust := dataset.GroupBy(ones, func(o q13Orders) int64 { return o.CustKey }).On("custkey").Reduce(func(a, b q13Orders) q13Orders {
		a.Count += b.Count
		return a
	})
	counts := dataset.LeftOuterJoin(custs, perCust,
		func(c q13Customer) int64 { return c.CustKey }, func(o q13Orders) int64 { return o.CustKey },
		func(c *q13Customer, o *q13Orders) Q13Row {
			if o == nil {
				return Q13Row{Count: 0, Dist: 1}
			}
			return Q13Row{Count: o.Count, Dist: 1}
		}).On("custkey")
	dist := dataset.GroupBy(counts, func(r Q13Row) int64 { return r.Count }).On("c_count").Reduce(func(a, b Q13Row) Q13Row {
		a.Dist += b.Dist
		return a
	})
	sorted := dataset.SortBy(dist,
		dataset.By(func(r Q13Row) int64 { return r.Dist }, dataset.Descending),
		dataset.By(func(r Q13Row) int64 { return r.Count }, dataset.Descending))
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
