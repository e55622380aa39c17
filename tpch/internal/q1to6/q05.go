package q1to6

import (
	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q5Columns = []string{"n_name", "revenue"}

// q5Supplier is the supplier projection of Q5.
type q5Supplier struct {
	SuppKey   int64 `weir:"s_suppkey"`
	NationKey int64 `weir:"s_nationkey"`
}

// q5Customer is the customer projection of Q5.
type q5Customer struct {
	CustKey   int64 `weir:"c_custkey"`
	NationKey int64 `weir:"c_nationkey"`
}

// q5Order is the orders projection of Q5.
type q5Order struct {
	OrderKey int64 `weir:"o_orderkey"`
	CustKey  int64 `weir:"o_custkey"`
}

// q5Line is the lineitem projection of Q5.
type q5Line struct {
	OrderKey      int64           `weir:"l_orderkey"`
	SuppKey       int64           `weir:"l_suppkey"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
}

// q5OrderNation is a 1994 order with its customer's nation.
type q5OrderNation struct{ OrderKey, NationKey int64 }

// q5Sale is a 1994 line with its customer's nation.
type q5Sale struct {
	SuppKey   int64
	NationKey int64 // the customer's
	Revenue   parquet.Decimal
}

// q5SuppNation is an Asian supplier with its nation's name.
type q5SuppNation struct {
	SuppKey   int64
	NationKey int64
	Nation    string
}

// suppNation is the composite key s_suppkey, s_nationkey (= c_nationkey).
type suppNation struct{ SuppKey, NationKey int64 }

// Q5Row is a row of Q5 (Local Supplier Volume).
type Q5Row struct {
	Nation  string
	Revenue parquet.Decimal // scale 4
}

// Fields implements Row.
func (r Q5Row) Fields() []string { return []string{r.Nation, r.Revenue.String()} }

// Q5 is Local Supplier Volume:
//
//	nation ─Join─ region (ASIA, broadcast) ; supplier ─Join─ those nations (broadcast)
//	customer ─SemiJoin─ those nations ; orders (1994) ─Join─ those customers
//	lineitem ─Join on orderkey─ those orders
//	  ─Join on (suppkey, nationkey)─ Asian suppliers (broadcast)
//	  ─GroupBy(n_name).Reduce(Σ revenue)→ Sort(revenue desc)
func Q5(env *dataset.Env, dir string) (*query.Rows[Q5Row], error) {
	s := query.NewScanner(env, dir)
	regions := query.Scan[query.Region](s, "region", query.Where("r_name", parquet.Eq, "ASIA"))
	nations := query.Scan[query.Nation](s, "nation")
	supps := query.Scan[q5Supplier](s, "supplier")
	custs := query.Scan[q5Customer](s, "customer")
	orders := query.Scan[q5Order](s, "orders",
		query.Where("o_orderdate", parquet.Ge, query.Date(1994, 1, 1)), query.Where("o_orderdate", parquet.Lt, query.Date(1995, 1, 1)))
	lines := query.Scan[q5Line](s, "lineitem")

	asia := dataset.SemiJoin(nations, regions,
		func(n query.Nation) int64 { return n.RegionKey }, func(r query.Region) int64 { return r.RegionKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("regionkey").Forwards("nationkey", "regionkey")
	asiaSupps := dataset.Join(supps, asia,
		func(s q5Supplier) int64 { return s.NationKey }, func(n query.Nation) int64 { return n.NationKey },
		func(s *q5Supplier, n *query.Nation) q5SuppNation {
			return q5SuppNation{SuppKey: s.SuppKey, NationKey: s.NationKey, Nation: n.Name}
		}).WithJoinHint(dataset.BroadcastHashSecond).On("nationkey").Forwards("suppkey", "nationkey")
	// c_nationkey = s_nationkey and s_nationkey is Asian: so is the
	// customer's nation, and only Asian customers' orders can count
	asiaCusts := dataset.SemiJoin(custs, asia,
		func(c q5Customer) int64 { return c.NationKey }, func(n query.Nation) int64 { return n.NationKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("nationkey").Forwards("custkey", "nationkey").KeyColumns("c_nationkey", "")
	custOrders := dataset.Join(orders, asiaCusts,
		func(o q5Order) int64 { return o.CustKey }, func(c q5Customer) int64 { return c.CustKey },
		func(o *q5Order, c *q5Customer) q5OrderNation {
			return q5OrderNation{OrderKey: o.OrderKey, NationKey: c.NationKey}
		}).On("custkey").Forwards("orderkey", "nationkey").KeyColumns("o_custkey", "")
	sales := dataset.Join(lines, custOrders,
		func(l q5Line) int64 { return l.OrderKey }, func(o q5OrderNation) int64 { return o.OrderKey },
		func(l *q5Line, o *q5OrderNation) q5Sale {
			return q5Sale{SuppKey: l.SuppKey, NationKey: o.NationKey, Revenue: query.Discounted(l.ExtendedPrice, l.Discount)}
		}).On("orderkey").Forwards("suppkey", "nationkey").KeyColumns("l_orderkey", "")
	local := dataset.Join(sales, asiaSupps,
		func(x q5Sale) suppNation { return suppNation{x.SuppKey, x.NationKey} },
		func(s q5SuppNation) suppNation { return suppNation{s.SuppKey, s.NationKey} },
		func(x *q5Sale, s *q5SuppNation) Q5Row { return Q5Row{Nation: s.Nation, Revenue: x.Revenue} }).
		WithJoinHint(dataset.BroadcastHashSecond).On("suppkey", "nationkey")
	sums := dataset.GroupBy(local, func(r Q5Row) string { return r.Nation }).On("n_name").Reduce(func(a, b Q5Row) Q5Row {
		a.Revenue = a.Revenue.Add(b.Revenue)
		return a
	})
	sorted := dataset.Sort(sums, func(r Q5Row) int64 { return query.NegRevenue(r.Revenue) }, dataset.Ascending)
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
