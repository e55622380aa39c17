package q12to17

import (
	"strings"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q14Columns = []string{"promo_revenue"}

// q14Line is the lineitem projection of Q14.
type q14Line struct {
	PartKey       int64           `weir:"l_partkey"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
}

// q14Part is the part projection of Q14.
type q14Part struct {
	PartKey int64  `weir:"p_partkey"`
	Type    string `weir:"p_type"`
}

// q14Sums are Q14's two sums.
type q14Sums struct {
	Promo parquet.Decimal // revenue of PROMO parts, scale 4
	Total parquet.Decimal // all revenue, scale 4
}

// Q14Row is the row of Q14 (Promotion Effect).
type Q14Row struct {
	PromoRevenue float64 // 100 × promo / total
	Null         bool    // no line qualified
}

// Fields implements Row.
func (r Q14Row) Fields() []string {
	if r.Null {
		return []string{""}
	}
	return []string{query.FormatFloat(r.PromoRevenue)}
}

// q14Revenue is a line's revenue, counted as promotional if its part is.
func q14Revenue(l *q14Line, p *q14Part) q14Sums {
	r := query.Discounted(l.ExtendedPrice, l.Discount)
	if strings.HasPrefix(p.Type, "PROMO") {
		return q14Sums{Promo: r, Total: r}
	}
	return q14Sums{Promo: parquet.NewDecimal(0, r.Scale), Total: r}
}

func q14Merge(a, b q14Sums) q14Sums { return q14Sums{a.Promo.Add(b.Promo), a.Total.Add(b.Total)} }

// Q14 is Promotion Effect:
//
//	lineitem (September 1995, in the scan) ─Join on partkey─ part
//	  ─AggregateAll(Σ promo, Σ total)─Map→ 100 × promo / total
func Q14(env *dataset.Env, dir string) (*query.Rows[Q14Row], error) {
	s := query.NewScanner(env, dir)
	lines := query.Scan[q14Line](s, "lineitem",
		query.Where("l_shipdate", parquet.Ge, query.Date(1995, 9, 1)), query.Where("l_shipdate", parquet.Lt, query.Date(1995, 10, 1)))
	parts := query.Scan[q14Part](s, "part")

	rev := dataset.Join(lines, parts,
		func(l q14Line) int64 { return l.PartKey }, func(p q14Part) int64 { return p.PartKey },
		q14Revenue).On("partkey").KeyColumns("l_partkey", "p_partkey")
	sums := dataset.AggregateAll(rev, agg.Func[q14Sums, q14Sums]{
		Init:  func(x q14Sums) q14Sums { return x },
		Merge: q14Merge,
	})
	ratio := dataset.Map(sums, func(x q14Sums) Q14Row {
		return Q14Row{PromoRevenue: 100 * x.Promo.Float64() / x.Total.Float64()}
	})
	return query.NewRows(dataset.Collect(ratio), []Q14Row{{Null: true}}), s.Err()
}
