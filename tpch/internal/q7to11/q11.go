package q7to11

import (
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q11Columns = []string{"ps_partkey", "value"}

// q11Supplier is the supplier projection of Q11.
type q11Supplier struct {
	SuppKey   int64 `weir:"s_suppkey"`
	NationKey int64 `weir:"s_nationkey"`
}

// q11PartSupp is the partsupp projection of Q11.
type q11PartSupp struct {
	PartKey    int64           `weir:"ps_partkey"`
	SuppKey    int64           `weir:"ps_suppkey"`
	AvailQty   int64           `weir:"ps_availqty"`
	SupplyCost parquet.Decimal `weir:"ps_supplycost"`
}

// Q11Row is a row of Q11 (Important Stock Identification).
type Q11Row struct {
	PartKey int64
	Value   parquet.Decimal // Σ supplycost × availqty, scale 2
}

// Fields implements Row.
func (r Q11Row) Fields() []string {
	return []string{strconv.FormatInt(r.PartKey, 10), r.Value.String()}
}

// q11Fraction is the SQL's 0.0001000000 as its reciprocal: value > total ×
// 0.0001 is value × 10000 > total, exact in decimals.
var q11Fraction = parquet.NewDecimal(10000, 0)

// q11Important emits the part's row if its value exceeds the fraction of the
// total in the broadcast set (one record; none when no stock qualified, and
// then SQL's comparison with NULL keeps nothing).
func q11Important(r Q11Row, total []parquet.Decimal, emit func(Q11Row)) {
	if len(total) == 1 && r.Value.Mul(q11Fraction).Cmp(total[0]) > 0 {
		emit(r)
	}
}

// Q11 is Important Stock Identification:
//
//	supplier ─SemiJoin─ nation (GERMANY, in the scan), broadcast
//	partsupp ─SemiJoin on suppkey─ those suppliers, broadcast
//	  ─Map(supplycost × availqty)─GroupBy(partkey).Reduce(Σ value) ─┬──────────────────────────────┐
//	                                        AggregateAll(Σ value) ──┴→ FlatMapWithBroadcast(value > total × 0.0001)
//	  ─Sort(value desc)
//
// The subquery's total over partsupp ⋈ supplier ⋈ nation is the sum of the
// per-part sums, so it is aggregated from the groups (a few thousand records)
// rather than from the join again; the HAVING is a filter against that one
// record, broadcast.
func Q11(env *dataset.Env, dir string) (*query.Rows[Q11Row], error) {
	s := query.NewScanner(env, dir)
	nations := query.Scan[query.Nation](s, "nation", query.Where("n_name", parquet.Eq, "GERMANY"))
	supps := query.Scan[q11Supplier](s, "supplier")
	partsupp := query.Scan[q11PartSupp](s, "partsupp")

	german := dataset.SemiJoin(supps, nations,
		func(s q11Supplier) int64 { return s.NationKey }, func(n query.Nation) int64 { return n.NationKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("nationkey").Forwards("suppkey", "nationkey")
	stock := dataset.SemiJoin(partsupp, german,
		func(ps q11PartSupp) int64 { return ps.SuppKey }, func(s q11Supplier) int64 { return s.SuppKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("suppkey").Forwards("partkey", "suppkey").
		KeyColumns("ps_suppkey", "")
	values := dataset.Map(stock, func(ps q11PartSupp) Q11Row {
		return Q11Row{PartKey: ps.PartKey, Value: ps.SupplyCost.Mul(parquet.NewDecimal(ps.AvailQty, 0))}
	}).Forwards("partkey")
	perPart := dataset.GroupBy(values, func(r Q11Row) int64 { return r.PartKey }).On("partkey").Reduce(func(a, b Q11Row) Q11Row {
		a.Value = a.Value.Add(b.Value)
		return a
	})
	total := dataset.AggregateAll(perPart, agg.SumAdder(func(r Q11Row) parquet.Decimal { return r.Value }))
	important := dataset.FlatMapWithBroadcast(perPart, total, q11Important)
	sorted := dataset.Sort(important, func(r Q11Row) int64 { return -r.Value.Rescale(2).Unscaled }, dataset.Ascending)
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
