package q7to11

import (
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q7Columns = []string{"supp_nation", "cust_nation", "l_year", "revenue"}

// q7Supplier is the supplier projection of Q7.
type q7Supplier struct {
	SuppKey   int64 `weir:"s_suppkey"`
	NationKey int64 `weir:"s_nationkey"`
}

// q7Customer is the customer projection of Q7.
type q7Customer struct {
	CustKey   int64 `weir:"c_custkey"`
	NationKey int64 `weir:"c_nationkey"`
}

// q7Order is the orders projection of Q7.
type q7Order struct {
	OrderKey int64 `weir:"o_orderkey"`
	CustKey  int64 `weir:"o_custkey"`
}

// q7Line is the lineitem projection of Q7.
type q7Line struct {
	OrderKey      int64           `weir:"l_orderkey"`
	SuppKey       int64           `weir:"l_suppkey"`
	ShipDate      parquet.Date    `weir:"l_shipdate"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
}

// q7Keyed is a supplier, customer or order with the name of a nation.
type q7Keyed struct {
	Key    int64 // s_suppkey, c_custkey or o_orderkey
	Nation string
}

// q7Shipment is a line shipped in 1995 or 1996 with its supplier's nation.
type q7Shipment struct {
	OrderKey int64
	Nation   string // the supplier's
	Year     int64
	Volume   parquet.Decimal
}

// q7Group is Q7's grouping key.
type q7Group struct {
	SuppNation, CustNation string
	Year                   int64
}

// Q7Row is a row of Q7 (Volume Shipping).
type Q7Row struct {
	q7Group
	Revenue parquet.Decimal // scale 4
}

// Fields implements Row.
func (r Q7Row) Fields() []string {
	return []string{r.SuppNation, r.CustNation, strconv.FormatInt(r.Year, 10), r.Revenue.String()}
}

// q7Named joins records keyed by a nation key with the nation's name.
func q7Named[T any](ds *dataset.DataSet[T], nations *dataset.DataSet[query.Nation], key, nationKey func(T) int64) *dataset.DataSet[q7Keyed] {
	return dataset.Join(ds, nations, nationKey, func(n query.Nation) int64 { return n.NationKey },
		func(v *T, n *query.Nation) q7Keyed { return q7Keyed{Key: key(*v), Nation: n.Name} }).
		WithJoinHint(dataset.BroadcastHashSecond).On("nationkey")
}

// Q7 is Volume Shipping. With both nations FRANCE or GERMANY (in the nation
// scans), the SQL's (FRANCE, GERMANY) or (GERMANY, FRANCE) is "the supplier's
// and the customer's nations differ":
//
//	supplier ─Join─ nation n1 (FRANCE, GERMANY; broadcast)
//	customer ─Join─ nation n2 (FRANCE, GERMANY; broadcast) ; orders ─Join on custkey─ those customers
//	lineitem (shipped 1995..1996, in the scan) ─Join on suppkey─ those suppliers (broadcast)
//	  ─Join on orderkey─ those orders ─Filter(nations differ)
//	  ─GroupBy(supp_nation, cust_nation, l_year).Reduce(Σ volume)→ SortBy(supp_nation, cust_nation, l_year)
func Q7(env *dataset.Env, dir string) (*query.Rows[Q7Row], error) {
	s := query.NewScanner(env, dir)
	pair := query.Where("n_name", parquet.In, "FRANCE", "GERMANY")
	n1 := query.Scan[query.Nation](s, "nation", pair)
	n2 := query.Scan[query.Nation](s, "nation", pair)
	supps := query.Scan[q7Supplier](s, "supplier")
	custs := query.Scan[q7Customer](s, "customer")
	orders := query.Scan[q7Order](s, "orders")
	lines := query.Scan[q7Line](s, "lineitem", query.Where("l_shipdate", parquet.Between, query.Date(1995, 1, 1), query.Date(1996, 12, 31)))

	suppNations := q7Named(supps, n1,
		func(s q7Supplier) int64 { return s.SuppKey }, func(s q7Supplier) int64 { return s.NationKey })
	custNations := q7Named(custs, n2,
		func(c q7Customer) int64 { return c.CustKey }, func(c q7Customer) int64 { return c.NationKey })
	orderNations := dataset.Join(orders, custNations,
		func(o q7Order) int64 { return o.CustKey }, func(c q7Keyed) int64 { return c.Key },
		func(o *q7Order, c *q7Keyed) q7Keyed { return q7Keyed{Key: o.OrderKey, Nation: c.Nation} }).
		On("custkey").KeyColumns("o_custkey", "")
	shipments := dataset.Join(lines, suppNations,
		func(l q7Line) int64 { return l.SuppKey }, func(s q7Keyed) int64 { return s.Key },
		func(l *q7Line, s *q7Keyed) q7Shipment {
			return q7Shipment{OrderKey: l.OrderKey, Nation: s.Nation, Year: int64(l.ShipDate.Time().Year()),
				Volume: query.Discounted(l.ExtendedPrice, l.Discount)}
		}).WithJoinHint(dataset.BroadcastHashSecond).On("suppkey").KeyColumns("l_suppkey", "")
	trade := dataset.Join(shipments, orderNations,
		func(x q7Shipment) int64 { return x.OrderKey }, func(o q7Keyed) int64 { return o.Key },
		func(x *q7Shipment, o *q7Keyed) Q7Row {
			return Q7Row{q7Group: q7Group{SuppNation: x.Nation, CustNation: o.Nation, Year: x.Year}, Revenue: x.Volume}
		}).On("orderkey").
		Filter(func(r Q7Row) bool { return r.SuppNation != r.CustNation })
	sums := dataset.GroupBy(trade, func(r Q7Row) q7Group { return r.q7Group }).
		On("supp_nation", "cust_nation", "l_year").Reduce(func(a, b Q7Row) Q7Row {
		a.Revenue = a.Revenue.Add(b.Revenue)
		return a
	})
	sorted := dataset.SortBy(sums,
		dataset.By(func(r Q7Row) string { return r.SuppNation }, dataset.Ascending),
		dataset.By(func(r Q7Row) string { return r.CustNation }, dataset.Ascending),
		dataset.By(func(r Q7Row) int64 { return r.Year }, dataset.Ascending)).
		On("supp_nation", "cust_nation", "l_year")
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
