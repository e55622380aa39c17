package q7to11

import (
	"strconv"
	"strings"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q9Columns = []string{"nation", "o_year", "sum_profit"}

// q9Part is the part projection of Q9.
type q9Part struct {
	PartKey int64  `weir:"p_partkey"`
	Name    string `weir:"p_name"`
}

// q9Line is the lineitem projection of Q9.
type q9Line struct {
	OrderKey      int64           `weir:"l_orderkey"`
	PartKey       int64           `weir:"l_partkey"`
	SuppKey       int64           `weir:"l_suppkey"`
	Quantity      parquet.Decimal `weir:"l_quantity"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
}

// q9PartSupp is the partsupp projection of Q9.
type q9PartSupp struct {
	PartKey    int64           `weir:"ps_partkey"`
	SuppKey    int64           `weir:"ps_suppkey"`
	SupplyCost parquet.Decimal `weir:"ps_supplycost"`
}

// q9Supplier is the supplier projection of Q9.
type q9Supplier struct {
	SuppKey   int64 `weir:"s_suppkey"`
	NationKey int64 `weir:"s_nationkey"`
}

// q9Order is the orders projection of Q9.
type q9Order struct {
	OrderKey  int64        `weir:"o_orderkey"`
	OrderDate parquet.Date `weir:"o_orderdate"`
}

// q9PartSuppKey is the composite key ps_partkey, ps_suppkey (= l_partkey, l_suppkey).
type q9PartSuppKey struct{ PartKey, SuppKey int64 }

// q9Profit is a line's profit, with the supplier's nation once known.
type q9Profit struct {
	OrderKey int64
	SuppKey  int64
	Nation   string
	Amount   parquet.Decimal // scale 4
}

// q9SuppNation is a supplier with its nation's name.
type q9SuppNation struct {
	SuppKey int64
	Nation  string
}

// q9Group is Q9's grouping key.
type q9Group struct {
	Nation string
	Year   int64
}

// Q9Row is a row of Q9 (Product Type Profit Measure).
type Q9Row struct {
	q9Group
	Profit parquet.Decimal // scale 4
}

// Fields implements Row.
func (r Q9Row) Fields() []string {
	return []string{r.Nation, strconv.FormatInt(r.Year, 10), r.Profit.String()}
}

// q9Amount is l_extendedprice × (1 − l_discount) − ps_supplycost × l_quantity.
func q9Amount(l *q9Line, ps *q9PartSupp) q9Profit {
	return q9Profit{OrderKey: l.OrderKey, SuppKey: l.SuppKey,
		Amount: query.Discounted(l.ExtendedPrice, l.Discount).Sub(ps.SupplyCost.Mul(l.Quantity))}
}

// Q9 is Product Type Profit Measure:
//
//	lineitem ─SemiJoin on partkey─ part (p_name LIKE '%green%': Filter), broadcast
//	  ─Join on (partkey, suppkey)─ (partsupp ─SemiJoin on partkey─ the same parts)
//	  ─Join on suppkey─ (supplier ─Join─ nation, broadcast)
//	  ─Join on orderkey─ orders (the orders of the joined lines' keys only, in the scan)
//	  ─GroupBy(nation, o_year).Reduce(Σ amount)→ SortBy(nation, o_year desc)
func Q9(env *dataset.Env, dir string) (*query.Rows[Q9Row], error) {
	s := query.NewScanner(env, dir)
	// A part name is 5 of dbgen's 92 colors, so 5/92 of the names hold "green":
	// declared, the optimizer sees how few lineitems survive the semi join.
	parts := query.Scan[q9Part](s, "part").Filter(func(p q9Part) bool { return strings.Contains(p.Name, "green") }).
		WithSelectivity(5.0 / 92)
	lines := query.Scan[q9Line](s, "lineitem")
	partSupps := query.Scan[q9PartSupp](s, "partsupp")
	supps := query.Scan[q9Supplier](s, "supplier")
	nations := query.Scan[query.Nation](s, "nation")
	orders := query.Scan[q9Order](s, "orders")

	green := dataset.SemiJoin(lines, parts,
		func(l q9Line) int64 { return l.PartKey }, func(p q9Part) int64 { return p.PartKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("partkey").Forwards("orderkey", "partkey", "suppkey").
		KeyColumns("l_partkey", "")
	// partsupp's green rows, 5/92 of them, read through the same filter:
	// the build side of the join with the green lines
	greenSupps := dataset.SemiJoin(partSupps, parts,
		func(ps q9PartSupp) int64 { return ps.PartKey }, func(p q9Part) int64 { return p.PartKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("partkey").Forwards("partkey", "suppkey").
		KeyColumns("ps_partkey", "")
	profits := dataset.Join(green, greenSupps,
		func(l q9Line) q9PartSuppKey { return q9PartSuppKey{l.PartKey, l.SuppKey} },
		func(ps q9PartSupp) q9PartSuppKey { return q9PartSuppKey{ps.PartKey, ps.SuppKey} },
		q9Amount).On("partkey", "suppkey").Forwards("suppkey").
		WithSelectivity(1) // a profit per green line: both sides' filters are on partkey, not independent
	suppNations := dataset.Join(supps, nations,
		func(s q9Supplier) int64 { return s.NationKey }, func(n query.Nation) int64 { return n.NationKey },
		func(s *q9Supplier, n *query.Nation) q9SuppNation {
			return q9SuppNation{SuppKey: s.SuppKey, Nation: n.Name}
		}).
		WithJoinHint(dataset.BroadcastHashSecond).On("nationkey").Forwards("suppkey")
	named := dataset.Join(profits, suppNations,
		func(p q9Profit) int64 { return p.SuppKey }, func(s q9SuppNation) int64 { return s.SuppKey },
		func(p *q9Profit, s *q9SuppNation) q9Profit {
			out := *p
			out.Nation = s.Nation
			return out
		}).On("suppkey").Forwards("suppkey")
	dated := dataset.Join(named, orders,
		func(p q9Profit) int64 { return p.OrderKey }, func(o q9Order) int64 { return o.OrderKey },
		func(p *q9Profit, o *q9Order) Q9Row {
			return Q9Row{q9Group: q9Group{Nation: p.Nation, Year: int64(o.OrderDate.Time().Year())}, Profit: p.Amount}
		}).On("orderkey").KeyColumns("", "o_orderkey")
	sums := dataset.GroupBy(dated, func(r Q9Row) q9Group { return r.q9Group }).On("nation", "o_year").
		Reduce(func(a, b Q9Row) Q9Row {
			a.Profit = a.Profit.Add(b.Profit)
			return a
		})
	sorted := dataset.SortBy(sums,
		dataset.By(func(r Q9Row) string { return r.Nation }, dataset.Ascending),
		dataset.By(func(r Q9Row) int64 { return r.Year }, dataset.Descending)).On("nation", "o_year")
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
