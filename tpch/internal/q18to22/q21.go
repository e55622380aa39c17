package q18to22

import (
	"math"
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q21Columns = []string{"s_name", "numwait"}

// q21Line is the lineitem projection of Q21.
type q21Line struct {
	OrderKey    int64        `weir:"l_orderkey"`
	SuppKey     int64        `weir:"l_suppkey"`
	CommitDate  parquet.Date `weir:"l_commitdate"`
	ReceiptDate parquet.Date `weir:"l_receiptdate"`
}

// q21Order is an order with status 'F' (filtered in the scan).
type q21Order struct {
	OrderKey int64 `weir:"o_orderkey"`
}

// q21Supplier is the supplier projection of Q21.
type q21Supplier struct {
	SuppKey   int64  `weir:"s_suppkey"`
	Name      string `weir:"s_name"`
	NationKey int64  `weir:"s_nationkey"`
}

// q21Acc summarizes an order's lines: the least and greatest supplier of all
// its lines and of its late lines (receipt after commit), and how many lines
// were late.
type q21Acc struct {
	MinSupp, MaxSupp         int64
	MinLateSupp, MaxLateSupp int64 // MaxInt64, MinInt64 with no late line
	Late                     int64
}

func q21Init(l q21Line) q21Acc {
	a := q21Acc{MinSupp: l.SuppKey, MaxSupp: l.SuppKey, MinLateSupp: math.MaxInt64, MaxLateSupp: math.MinInt64}
	if l.ReceiptDate > l.CommitDate {
		a.MinLateSupp, a.MaxLateSupp, a.Late = l.SuppKey, l.SuppKey, 1
	}
	return a
}

func q21Merge(a, b q21Acc) q21Acc {
	return q21Acc{
		MinSupp: min(a.MinSupp, b.MinSupp), MaxSupp: max(a.MaxSupp, b.MaxSupp),
		MinLateSupp: min(a.MinLateSupp, b.MinLateSupp), MaxLateSupp: max(a.MaxLateSupp, b.MaxLateSupp),
		Late: a.Late + b.Late,
	}
}

// q21Waiting is an order that kept only one of its several suppliers'
// lines late: that supplier and its late lines.
type q21Waiting struct {
	OrderKey int64
	SuppKey  int64
	Late     int64
}

// q21Wait emits the order's late supplier if the SQL counts its late lines:
// l1 is late, another supplier has a line in the order (EXISTS l2), and no
// other supplier's line is late (NOT EXISTS l3). For a late l1 of supplier s
// the first holds when the order has more than one supplier and the second
// when s is the only late supplier; then every late line of the order is
// such an l1.
func q21Wait(kv dataset.KV[int64, q21Acc], emit func(q21Waiting)) {
	a := kv.Value
	if a.Late > 0 && a.MinSupp != a.MaxSupp && a.MinLateSupp == a.MaxLateSupp {
		emit(q21Waiting{OrderKey: kv.Key, SuppKey: a.MinLateSupp, Late: a.Late})
	}
}

// Q21Row is a row of Q21 (Suppliers Who Kept Orders Waiting).
type Q21Row struct {
	Name    string
	NumWait int64
}

// Fields implements Row.
func (r Q21Row) Fields() []string { return []string{r.Name, strconv.FormatInt(r.NumWait, 10)} }

// Q21 is Suppliers Who Kept Orders Waiting:
//
//	lineitem ─GroupBy(orderkey).Aggregate(min/max supplier of all lines and of
//	  the late ones, late lines)─FlatMap(one late supplier among several)
//	  ─SemiJoin on orderkey─ orders (status F)
//	  ─Join on suppkey─ supplier ─SemiJoin─ nation (SAUDI ARABIA), broadcast
//	  ─GroupBy(s_name).Reduce(Σ late lines)─Sort(numwait desc, s_name)─First(100)
//
// The EXISTS and NOT EXISTS subqueries on lineitem both compare suppliers
// within one order, so one aggregation per order decides them for all its
// lines (see q21Wait) instead of two self-joins of lineitem.
func Q21(env *dataset.Env, dir string) (*query.Rows[Q21Row], error) {
	s := query.NewScanner(env, dir)
	lines := query.Scan[q21Line](s, "lineitem")
	orders := query.Scan[q21Order](s, "orders", query.Where("o_orderstatus", parquet.Eq, "F"))
	supps := query.Scan[q21Supplier](s, "supplier")
	nations := query.Scan[query.Nation](s, "nation", query.Where("n_name", parquet.Eq, "SAUDI ARABIA"))

	perOrder := dataset.Aggregate(
		dataset.GroupBy(lines, func(l q21Line) int64 { return l.OrderKey }).On("orderkey"),
		agg.Func[q21Line, q21Acc]{Init: q21Init, Merge: q21Merge})
	waiting := dataset.FlatMap(perOrder, q21Wait).Forwards("orderkey")
	final := dataset.SemiJoin(waiting, orders,
		func(w q21Waiting) int64 { return w.OrderKey }, func(o q21Order) int64 { return o.OrderKey }).
		On("orderkey").Forwards("orderkey", "suppkey")
	saudi := dataset.SemiJoin(supps, nations,
		func(s q21Supplier) int64 { return s.NationKey }, func(n query.Nation) int64 { return n.NationKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("nationkey").Forwards("suppkey", "nationkey")
	named := dataset.Join(final, saudi,
		func(w q21Waiting) int64 { return w.SuppKey }, func(s q21Supplier) int64 { return s.SuppKey },
		func(w *q21Waiting, s *q21Supplier) Q21Row { return Q21Row{Name: s.Name, NumWait: w.Late} }).On("suppkey")
	counts := dataset.GroupBy(named, func(r Q21Row) string { return r.Name }).On("s_name").Reduce(func(a, b Q21Row) Q21Row {
		a.NumWait += b.NumWait
		return a
	})
	top := dataset.SortBy(counts,
		dataset.By(func(r Q21Row) int64 { return r.NumWait }, dataset.Descending),
		dataset.By(func(r Q21Row) string { return r.Name }, dataset.Ascending)).First(100)
	return query.NewRows(dataset.Collect(top), nil), s.Err()
}
