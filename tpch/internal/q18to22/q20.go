package q18to22

import (
	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q20Columns = []string{"s_name", "s_address"}

// q20Part is a forest part's key (the name is filtered in the scan).
type q20Part struct {
	PartKey int64 `weir:"p_partkey"`
}

// q20PartSupp is the partsupp projection of Q20.
type q20PartSupp struct {
	PartKey  int64 `weir:"ps_partkey"`
	SuppKey  int64 `weir:"ps_suppkey"`
	AvailQty int64 `weir:"ps_availqty"`
}

// q20Line is the lineitem projection of Q20.
type q20Line struct {
	PartKey  int64           `weir:"l_partkey"`
	SuppKey  int64           `weir:"l_suppkey"`
	Quantity parquet.Decimal `weir:"l_quantity"`
}

// q20Key is the composite key partkey, suppkey.
type q20Key struct{ PartKey, SuppKey int64 }

// q20Supplier is the supplier projection of Q20.
type q20Supplier struct {
	SuppKey   int64  `weir:"s_suppkey"`
	Name      string `weir:"s_name"`
	Address   string `weir:"s_address"`
	NationKey int64  `weir:"s_nationkey"`
}

// q20Excess is a forest partsupp's supplier and whether its available
// quantity exceeds half of what was shipped in 1994.
type q20Excess struct {
	SuppKey int64
	Ok      bool
}

// Q20Row is a row of Q20 (Potential Part Promotion).
type Q20Row struct {
	Name    string
	Address string
}

// Fields implements Row.
func (r Q20Row) Fields() []string { return []string{r.Name, r.Address} }

// Q20 is Potential Part Promotion:
//
//	part (p_name LIKE 'forest%', in the scan) ── broadcast to both:
//	lineitem (1994) ─SemiJoin on partkey─ forest parts
//	  ─GroupBy(partkey, suppkey).Aggregate(Σ quantity)
//	  ─Join on (partkey, suppkey)─ partsupp ─SemiJoin on partkey─ forest parts
//	  ─Filter(availqty > 0.5 × Σ quantity)
//	supplier ─SemiJoin─ nation (CANADA, broadcast) ─SemiJoin on suppkey─ those partsupps
//	  ─Sort(s_name)
//
// The correlated subquery is a sum per (partkey, suppkey) joined back to
// partsupp: a partsupp with no 1994 line has a NULL sum, which the SQL's
// comparison rejects, as the inner join does. The IN subqueries are semi
// joins. LIKE 'forest%' is the range "forest" <= p_name < "foresu", which
// holds exactly for the names that start with "forest", so the scan applies
// it.
func Q20(env *dataset.Env, dir string) (*query.Rows[Q20Row], error) {
	s := query.NewScanner(env, dir)
	parts := query.Scan[q20Part](s, "part", query.Where("p_name", parquet.Ge, "forest"), query.Where("p_name", parquet.Lt, "foresu"))
	partsupps := query.Scan[q20PartSupp](s, "partsupp")
	lines := query.Scan[q20Line](s, "lineitem",
		query.Where("l_shipdate", parquet.Ge, query.Date(1994, 1, 1)), query.Where("l_shipdate", parquet.Lt, query.Date(1995, 1, 1)))
	supps := query.Scan[q20Supplier](s, "supplier")
	nations := query.Scan[query.Nation](s, "nation", query.Where("n_name", parquet.Eq, "CANADA"))

	forestLines := dataset.SemiJoin(lines, parts,
		func(l q20Line) int64 { return l.PartKey }, func(p q20Part) int64 { return p.PartKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("partkey").Forwards("partkey", "suppkey").
		KeyColumns("l_partkey", "")
	shipped := dataset.Aggregate(
		dataset.GroupBy(forestLines, func(l q20Line) q20Key { return q20Key{l.PartKey, l.SuppKey} }).On("partkey", "suppkey"),
		agg.SumAdder(func(l q20Line) parquet.Decimal { return l.Quantity }))
	forestPS := dataset.SemiJoin(partsupps, parts,
		func(ps q20PartSupp) int64 { return ps.PartKey }, func(p q20Part) int64 { return p.PartKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("partkey").Forwards("partkey", "suppkey").
		KeyColumns("ps_partkey", "")
	excess := dataset.Join(forestPS, shipped,
		func(ps q20PartSupp) q20Key { return q20Key{ps.PartKey, ps.SuppKey} },
		func(kv dataset.KV[q20Key, parquet.Decimal]) q20Key { return kv.Key },
		func(ps *q20PartSupp, kv *dataset.KV[q20Key, parquet.Decimal]) q20Excess {
			// ps_availqty > 0.5 × Σ ⇔ 2 × ps_availqty > Σ, exactly
			return q20Excess{SuppKey: ps.SuppKey, Ok: parquet.NewDecimal(2*ps.AvailQty, 0).Cmp(kv.Value) > 0}
		}).On("partkey", "suppkey").Forwards("suppkey").
		Filter(func(x q20Excess) bool { return x.Ok })
	canada := dataset.SemiJoin(supps, nations,
		func(s q20Supplier) int64 { return s.NationKey }, func(n query.Nation) int64 { return n.NationKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("nationkey").Forwards("suppkey", "nationkey")
	chosen := dataset.SemiJoin(canada, excess,
		func(s q20Supplier) int64 { return s.SuppKey }, func(x q20Excess) int64 { return x.SuppKey }).On("suppkey")
	rows := dataset.Map(chosen, func(s q20Supplier) Q20Row { return Q20Row{Name: s.Name, Address: s.Address} })
	sorted := dataset.Sort(rows, func(r Q20Row) string { return r.Name }, dataset.Ascending)
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
