package q1to6

import (
	"iter"
	"strconv"
	"strings"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q2Columns = []string{"s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone", "s_comment"}

// q2Part is the part projection of Q2 (p_size = 15 is filtered in the scan).
type q2Part struct {
	PartKey int64  `weir:"p_partkey"`
	Mfgr    string `weir:"p_mfgr"`
	Type    string `weir:"p_type"`
}

// q2Supplier is the supplier projection of Q2.
type q2Supplier struct {
	SuppKey   int64           `weir:"s_suppkey"`
	Name      string          `weir:"s_name"`
	Address   string          `weir:"s_address"`
	NationKey int64           `weir:"s_nationkey"`
	Phone     string          `weir:"s_phone"`
	AcctBal   parquet.Decimal `weir:"s_acctbal"`
	Comment   string          `weir:"s_comment"`
}

// q2PartSupp is the partsupp projection of Q2.
type q2PartSupp struct {
	PartKey    int64           `weir:"ps_partkey"`
	SuppKey    int64           `weir:"ps_suppkey"`
	SupplyCost parquet.Decimal `weir:"ps_supplycost"`
}

// q2Offer is a European supplier's offer of a part.
type q2Offer struct {
	PartKey    int64
	SuppKey    int64
	SupplyCost parquet.Decimal
	Mfgr       string
}

// Q2Row is a row of Q2 (Minimum Cost Supplier).
type Q2Row struct {
	AcctBal    parquet.Decimal
	SuppName   string
	Nation     string
	PartKey    int64
	Mfgr       string
	Address    string
	Phone      string
	Comment    string
	SuppKey    int64           // the join key of supplier; not a column of the result
	SupplyCost parquet.Decimal // the offer's cost; not a column of the result
}

// Fields implements Row.
func (r Q2Row) Fields() []string {
	return []string{r.AcctBal.String(), r.SuppName, r.Nation, strconv.FormatInt(r.PartKey, 10), r.Mfgr,
		r.Address, r.Phone, r.Comment}
}

// q2Cost is a supply cost as an ordered key (ps_supplycost is DECIMAL(15,2)).
func q2Cost(r Q2Row) int64 { return r.SupplyCost.Rescale(2).Unscaled }

// q2Cheapest emits the offers of a part whose cost is the part's least: the
// group arrives sorted by cost, so they are the group's first records.
func q2Cheapest(_ int64, offers iter.Seq[Q2Row], emit func(Q2Row)) {
	first, least := true, int64(0)
	for r := range offers {
		c := q2Cost(r)
		if !first && c != least {
			return
		}
		first, least = false, c
		emit(r)
	}
}

// Q2 is Minimum Cost Supplier. The correlated subquery (the least cost of the
// part among European suppliers) is a grouping by part of the very offers the
// outer query joins, so the offers are joined once and each part's group
// keeps its cheapest:
//
//	nation ─SemiJoin─ region (EUROPE, broadcast) ; supplier ─Join─ those nations (broadcast)
//	partsupp ─Join on partkey─ part (size 15 in the scan, type LIKE '%BRASS': Filter), broadcast
//	  ─Join on suppkey─ European suppliers (broadcast)
//	  ─GroupBy(partkey).SortGroup(cost).ReduceGroup(least-cost offers)
//	  ─SortBy(acctbal desc, n_name, s_name, partkey)─First(100)
func Q2(env *dataset.Env, dir string) (*query.Rows[Q2Row], error) {
	s := query.NewScanner(env, dir)
	regions := query.Scan[query.Region](s, "region", query.Where("r_name", parquet.Eq, "EUROPE"))
	nations := query.Scan[query.Nation](s, "nation")
	supps := query.Scan[q2Supplier](s, "supplier")
	parts := query.Scan[q2Part](s, "part", query.Where("p_size", parquet.Eq, 15)).
		Filter(func(p q2Part) bool { return strings.HasSuffix(p.Type, "BRASS") })
	partSupps := query.Scan[q2PartSupp](s, "partsupp")

	europe := dataset.SemiJoin(nations, regions,
		func(n query.Nation) int64 { return n.RegionKey }, func(r query.Region) int64 { return r.RegionKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("regionkey").Forwards("nationkey", "regionkey")
	euroSupps := dataset.Join(supps, europe,
		func(s q2Supplier) int64 { return s.NationKey }, func(n query.Nation) int64 { return n.NationKey },
		func(s *q2Supplier, n *query.Nation) Q2Row {
			return Q2Row{AcctBal: s.AcctBal, SuppName: s.Name, Nation: n.Name, Address: s.Address,
				Phone: s.Phone, Comment: s.Comment, SuppKey: s.SuppKey}
		}).WithJoinHint(dataset.BroadcastHashSecond).On("nationkey").Forwards("suppkey")
	brass := dataset.Join(partSupps, parts,
		func(ps q2PartSupp) int64 { return ps.PartKey }, func(p q2Part) int64 { return p.PartKey },
		func(ps *q2PartSupp, p *q2Part) q2Offer {
			return q2Offer{PartKey: ps.PartKey, SuppKey: ps.SuppKey, SupplyCost: ps.SupplyCost, Mfgr: p.Mfgr}
		}).WithJoinHint(dataset.BroadcastHashSecond).On("partkey").Forwards("partkey", "suppkey")
	offers := dataset.Join(brass, euroSupps,
		func(o q2Offer) int64 { return o.SuppKey }, func(r Q2Row) int64 { return r.SuppKey },
		func(o *q2Offer, r *Q2Row) Q2Row {
			out := *r
			out.PartKey, out.SupplyCost, out.Mfgr = o.PartKey, o.SupplyCost, o.Mfgr
			return out
		}).WithJoinHint(dataset.BroadcastHashSecond).On("suppkey").Forwards("partkey", "suppkey")
	byPart := dataset.GroupBy(offers, func(r Q2Row) int64 { return r.PartKey }).On("partkey")
	cheapest := dataset.ReduceGroup(dataset.SortGroup(byPart, q2Cost, dataset.Ascending), q2Cheapest)
	top := dataset.SortBy(cheapest,
		dataset.By(func(r Q2Row) int64 { return r.AcctBal.Rescale(2).Unscaled }, dataset.Descending),
		dataset.By(func(r Q2Row) string { return r.Nation }, dataset.Ascending),
		dataset.By(func(r Q2Row) string { return r.SuppName }, dataset.Ascending),
		dataset.By(func(r Q2Row) int64 { return r.PartKey }, dataset.Ascending)).
		On("s_acctbal", "n_name", "s_name", "partkey").First(100)
	return query.NewRows(dataset.Collect(top), nil), s.Err()
}
