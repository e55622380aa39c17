package q7to11

import (
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q8Columns = []string{"o_year", "mkt_share"}

// q8Part is a part of type ECONOMY ANODIZED STEEL (filtered in the scan).
type q8Part struct {
	PartKey int64 `weir:"p_partkey"`
}

// q8Line is the lineitem projection of Q8.
type q8Line struct {
	OrderKey      int64           `weir:"l_orderkey"`
	PartKey       int64           `weir:"l_partkey"`
	SuppKey       int64           `weir:"l_suppkey"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
}

// q8Order is the orders projection of Q8.
type q8Order struct {
	OrderKey  int64        `weir:"o_orderkey"`
	CustKey   int64        `weir:"o_custkey"`
	OrderDate parquet.Date `weir:"o_orderdate"`
}

// q8Customer is the customer projection of Q8.
type q8Customer struct {
	CustKey   int64 `weir:"c_custkey"`
	NationKey int64 `weir:"c_nationkey"`
}

// q8Supplier is the supplier projection of Q8.
type q8Supplier struct {
	SuppKey   int64 `weir:"s_suppkey"`
	NationKey int64 `weir:"s_nationkey"`
}

// q8SuppNation is a supplier with its nation's name.
type q8SuppNation struct {
	SuppKey int64
	Nation  string
}

// q8Sale is a line of a steel part ordered by an American customer.
type q8Sale struct {
	SuppKey int64
	Year    int64
	Volume  parquet.Decimal
}

// q8Share is the volume of a year, in all and of Brazilian suppliers.
type q8Share struct {
	Year   int64
	Brazil parquet.Decimal // scale 4
	Total  parquet.Decimal // scale 4
}

// Q8Row is a row of Q8 (National Market Share).
type Q8Row struct {
	Year  int64
	Share float64
}

// Fields implements Row.
func (r Q8Row) Fields() []string {
	return []string{strconv.FormatInt(r.Year, 10), query.FormatFloat(r.Share)}
}

// q8Volume is a sale's volume, counted as Brazil's when its supplier is.
func q8Volume(x *q8Sale, s *q8SuppNation) q8Share {
	v := q8Share{Year: x.Year, Brazil: parquet.NewDecimal(0, 4), Total: x.Volume}
	if s.Nation == "BRAZIL" {
		v.Brazil = x.Volume
	}
	return v
}

// Q8 is National Market Share:
//
//	nation n1 ─SemiJoin─ region (AMERICA, broadcast) ; customer ─SemiJoin─ those nations (broadcast)
//	orders (1995..1996, in the scan) ─SemiJoin on custkey─ those customers
//	lineitem ─Join on partkey─ part (ECONOMY ANODIZED STEEL, in the scan), broadcast
//	  ─Join on orderkey─ those orders
//	  ─Join on suppkey─ supplier ─Join─ nation n2 (broadcast)
//	  ─GroupBy(o_year).Reduce(Σ Brazil's volume, Σ volume)─Map(ratio)→ Sort(o_year)
func Q8(env *dataset.Env, dir string) (*query.Rows[Q8Row], error) {
	s := query.NewScanner(env, dir)
	regions := query.Scan[query.Region](s, "region", query.Where("r_name", parquet.Eq, "AMERICA"))
	n1 := query.Scan[query.Nation](s, "nation")
	n2 := query.Scan[query.Nation](s, "nation")
	custs := query.Scan[q8Customer](s, "customer")
	orders := query.Scan[q8Order](s, "orders", query.Where("o_orderdate", parquet.Between, query.Date(1995, 1, 1), query.Date(1996, 12, 31)))
	parts := query.Scan[q8Part](s, "part", query.Where("p_type", parquet.Eq, "ECONOMY ANODIZED STEEL"))
	lines := query.Scan[q8Line](s, "lineitem")
	supps := query.Scan[q8Supplier](s, "supplier")

	america := dataset.SemiJoin(n1, regions,
		func(n query.Nation) int64 { return n.RegionKey }, func(r query.Region) int64 { return r.RegionKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("regionkey").Forwards("nationkey", "regionkey")
	amCusts := dataset.SemiJoin(custs, america,
		func(c q8Customer) int64 { return c.NationKey }, func(n query.Nation) int64 { return n.NationKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("nationkey").Forwards("custkey", "nationkey")
	amOrders := dataset.SemiJoin(orders, amCusts,
		func(o q8Order) int64 { return o.CustKey }, func(c q8Customer) int64 { return c.CustKey }).
		On("custkey").Forwards("orderkey", "custkey").KeyColumns("o_custkey", "")
	steel := dataset.SemiJoin(lines, parts,
		func(l q8Line) int64 { return l.PartKey }, func(p q8Part) int64 { return p.PartKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("partkey").Forwards("orderkey", "partkey", "suppkey").KeyColumns("l_partkey", "")
	sales := dataset.Join(steel, amOrders,
		func(l q8Line) int64 { return l.OrderKey }, func(o q8Order) int64 { return o.OrderKey },
		func(l *q8Line, o *q8Order) q8Sale {
			return q8Sale{SuppKey: l.SuppKey, Year: int64(o.OrderDate.Time().Year()),
				Volume: query.Discounted(l.ExtendedPrice, l.Discount)}
		}).On("orderkey").Forwards("suppkey")
	suppNations := dataset.Join(supps, n2,
		func(s q8Supplier) int64 { return s.NationKey }, func(n query.Nation) int64 { return n.NationKey },
		func(s *q8Supplier, n *query.Nation) q8SuppNation {
			return q8SuppNation{SuppKey: s.SuppKey, Nation: n.Name}
		}).
		WithJoinHint(dataset.BroadcastHashSecond).On("nationkey").Forwards("suppkey")
	volumes := dataset.Join(sales, suppNations,
		func(x q8Sale) int64 { return x.SuppKey }, func(s q8SuppNation) int64 { return s.SuppKey },
		q8Volume).On("suppkey")
	sums := dataset.GroupBy(volumes, func(v q8Share) int64 { return v.Year }).On("o_year").Reduce(func(a, b q8Share) q8Share {
		return q8Share{Year: a.Year, Brazil: a.Brazil.Add(b.Brazil), Total: a.Total.Add(b.Total)}
	})
	shares := dataset.Map(sums, func(v q8Share) Q8Row {
		return Q8Row{Year: v.Year, Share: v.Brazil.Float64() / v.Total.Float64()}
	})
	sorted := dataset.Sort(shares, func(r Q8Row) int64 { return r.Year }, dataset.Ascending).On("o_year")
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
