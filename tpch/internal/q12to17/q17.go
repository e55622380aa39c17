package q12to17

import (
	"iter"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q17Columns = []string{"avg_yearly"}

// q17Part is a part's key (brand and container are filtered in the scan).
type q17Part struct {
	PartKey int64 `weir:"p_partkey"`
}

// q17Line is the lineitem projection of Q17.
type q17Line struct {
	PartKey       int64           `weir:"l_partkey"`
	Quantity      parquet.Decimal `weir:"l_quantity"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
}

// q17Price is the summed price of a part's small-quantity lines.
type q17Price struct {
	Sum parquet.Decimal // scale 2
}

// Q17Row is the row of Q17 (Small-Quantity-Order Revenue).
type Q17Row struct {
	AvgYearly float64 // Σ price / 7
	Null      bool    // no line qualified
}

// Fields implements Row.
func (r Q17Row) Fields() []string {
	if r.Null {
		return []string{""}
	}
	return []string{query.FormatFloat(r.AvgYearly)}
}

// q17Small is the correlated subquery for one part: it emits the summed price
// of the part's lines whose quantity is below 0.2 × the part's average
// quantity. The average is a DOUBLE in SQL (avg of a DECIMAL), and so is the
// comparison, as DuckDB evaluates it.
func q17Small(_ int64, lines iter.Seq[q17Line], emit func(q17Price)) {
	var group []q17Line // a part has a few dozen lines at most
	sum := parquet.NewDecimal(0, 2)
	for l := range lines {
		group = append(group, l)
		sum = sum.Add(l.Quantity)
	}
	limit := 0.2 * (sum.Float64() / float64(len(group)))
	price, found := parquet.NewDecimal(0, 2), false
	for _, l := range group {
		if l.Quantity.Float64() < limit {
			price, found = price.Add(l.ExtendedPrice), true
		}
	}
	if found {
		emit(q17Price{Sum: price})
	}
}

// Q17 is Small-Quantity-Order Revenue:
//
//	lineitem ─SemiJoin on partkey─ part (Brand#23, MED BOX, in the scan), broadcast
//	  ─GroupBy(partkey).ReduceGroup(Σ price of lines with quantity < 0.2 × the group's avg)
//	  ─AggregateAll(Σ)─Map(/ 7)
//
// The subquery is correlated on p_partkey = l_partkey, so it is the average
// over the lines of the part's group: each group is read once, kept (a part
// has few lines) and read again against its own average.
func Q17(env *dataset.Env, dir string) (*query.Rows[Q17Row], error) {
	s := query.NewScanner(env, dir)
	parts := query.Scan[q17Part](s, "part", query.Where("p_brand", parquet.Eq, "Brand#23"), query.Where("p_container", parquet.Eq, "MED BOX"))
	lines := query.Scan[q17Line](s, "lineitem")

	ours := dataset.SemiJoin(lines, parts,
		func(l q17Line) int64 { return l.PartKey }, func(p q17Part) int64 { return p.PartKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("partkey").Forwards("partkey").
		KeyColumns("l_partkey", "")
	small := dataset.ReduceGroup(dataset.GroupBy(ours, func(l q17Line) int64 { return l.PartKey }).On("partkey"), q17Small)
	total := dataset.AggregateAll(small, agg.Func[q17Price, q17Price]{
		Init:  func(p q17Price) q17Price { return p },
		Merge: func(a, b q17Price) q17Price { return q17Price{Sum: a.Sum.Add(b.Sum)} },
	})
	yearly := dataset.Map(total, func(p q17Price) Q17Row { return Q17Row{AvgYearly: p.Sum.Float64() / 7.0} })
	return query.NewRows(dataset.Collect(yearly), []Q17Row{{Null: true}}), s.Err()
}
