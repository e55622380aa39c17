package q12to17

import (
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q15Columns = []string{"s_suppkey", "s_name", "s_address", "s_phone", "total_revenue"}

// q15Line is the lineitem projection of Q15.
type q15Line struct {
	SuppKey       int64           `weir:"l_suppkey"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
}

// q15Supplier is the supplier projection of Q15.
type q15Supplier struct {
	SuppKey int64  `weir:"s_suppkey"`
	Name    string `weir:"s_name"`
	Address string `weir:"s_address"`
	Phone   string `weir:"s_phone"`
}

// q15Revenue is a row of the view revenue: a supplier's revenue.
type q15Revenue struct {
	SuppKey int64
	Revenue parquet.Decimal // scale 4
}

// Q15Row is a row of Q15 (Top Supplier).
type Q15Row struct {
	SuppKey int64
	Name    string
	Address string
	Phone   string
	Revenue parquet.Decimal // scale 4
}

// Fields implements Row.
func (r Q15Row) Fields() []string {
	return []string{strconv.FormatInt(r.SuppKey, 10), r.Name, r.Address, r.Phone, r.Revenue.String()}
}

// q15Top emits the supplier's revenue if it equals the maximum in the
// broadcast set (one record).
func q15Top(r q15Revenue, top []q15Revenue, emit func(q15Revenue)) {
	if len(top) == 1 && r.Revenue.Cmp(top[0].Revenue) == 0 {
		emit(r)
	}
}

// q15Max keeps the greater revenue (exactly: the scales may differ).
func q15Max(a, b q15Revenue) q15Revenue {
	if b.Revenue.Cmp(a.Revenue) > 0 {
		return b
	}
	return a
}

// Q15 is Top Supplier:
//
//	lineitem (1996 Q1, in the scan) ─Map(revenue)─GroupBy(suppkey).Reduce(Σ revenue) ─┬────────────────────────┐
//	                                                     AggregateAll(max revenue) ──┴→ FlatMapWithBroadcast(= max)
//	  ─Join on suppkey─ supplier ─Sort(suppkey)
//
// The view is built once and read twice: by the maximum and by the filter
// that keeps the suppliers whose revenue equals it (all of them on a tie).
func Q15(env *dataset.Env, dir string) (*query.Rows[Q15Row], error) {
	s := query.NewScanner(env, dir)
	lines := query.Scan[q15Line](s, "lineitem",
		query.Where("l_shipdate", parquet.Ge, query.Date(1996, 1, 1)), query.Where("l_shipdate", parquet.Lt, query.Date(1996, 4, 1)))
	supps := query.Scan[q15Supplier](s, "supplier")

	rev := dataset.Map(lines, func(l q15Line) q15Revenue {
		return q15Revenue{SuppKey: l.SuppKey, Revenue: query.Discounted(l.ExtendedPrice, l.Discount)}
	}).Forwards("suppkey")
	perSupp := dataset.GroupBy(rev, func(r q15Revenue) int64 { return r.SuppKey }).On("suppkey").Reduce(func(a, b q15Revenue) q15Revenue {
		a.Revenue = a.Revenue.Add(b.Revenue)
		return a
	})
	best := dataset.AggregateAll(perSupp, agg.Func[q15Revenue, q15Revenue]{
		Init:  func(r q15Revenue) q15Revenue { return r },
		Merge: q15Max,
	})
	top := dataset.FlatMapWithBroadcast(perSupp, best, q15Top)
	rows := dataset.Join(top, supps,
		func(r q15Revenue) int64 { return r.SuppKey }, func(s q15Supplier) int64 { return s.SuppKey },
		func(r *q15Revenue, s *q15Supplier) Q15Row {
			return Q15Row{SuppKey: s.SuppKey, Name: s.Name, Address: s.Address, Phone: s.Phone, Revenue: r.Revenue}
		}).WithJoinHint(dataset.BroadcastHashFirst).On("suppkey").Forwards("suppkey")
	sorted := dataset.Sort(rows, func(r Q15Row) int64 { return r.SuppKey }, dataset.Ascending).On("suppkey")
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
