package q18to22

import (
	"slices"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q19Columns = []string{"revenue"}

// q19Line is the lineitem projection of Q19.
type q19Line struct {
	PartKey       int64           `weir:"l_partkey"`
	Quantity      parquet.Decimal `weir:"l_quantity"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
}

// q19Part is the part projection of Q19.
type q19Part struct {
	PartKey   int64  `weir:"p_partkey"`
	Brand     string `weir:"p_brand"`
	Container string `weir:"p_container"`
	Size      int64  `weir:"p_size"`
}

// q19Branch is one of the three disjuncts of Q19's WHERE.
type q19Branch struct {
	brand      string
	containers []string
	minQty     int64 // l_quantity between minQty and minQty + 10
	maxSize    int64 // p_size between 1 and maxSize
}

var q19Branches = [3]q19Branch{
	{"Brand#12", []string{"SM CASE", "SM BOX", "SM PACK", "SM PKG"}, 1, 5},
	{"Brand#23", []string{"MED BAG", "MED BOX", "MED PKG", "MED PACK"}, 10, 10},
	{"Brand#34", []string{"LG CASE", "LG BOX", "LG PACK", "LG PKG"}, 20, 15},
}

// branch returns the disjunct whose part conditions p meets, or -1.
func (p *q19Part) branch() int {
	for i := range q19Branches {
		b := &q19Branches[i]
		if p.Brand == b.brand && p.Size >= 1 && p.Size <= b.maxSize && slices.Contains(b.containers, p.Container) {
			return i
		}
	}
	return -1
}

// q19Pair is a line joined with the branch of its part.
type q19Pair struct {
	Line   q19Line
	Branch int64
}

// q19Revenue emits the line's revenue if its quantity is in its branch's range.
func q19Revenue(x q19Pair, emit func(Q19Row)) {
	lo := parquet.NewDecimal(q19Branches[x.Branch].minQty, 0)
	if x.Line.Quantity.Cmp(lo) >= 0 && x.Line.Quantity.Cmp(lo.Add(parquet.NewDecimal(10, 0))) <= 0 {
		emit(Q19Row{Revenue: query.Discounted(x.Line.ExtendedPrice, x.Line.Discount)})
	}
}

// Q19Row is the row of Q19 (Discounted Revenue).
type Q19Row struct {
	Revenue parquet.Decimal // scale 4
	Null    bool            // no line qualified
}

// Fields implements Row.
func (r Q19Row) Fields() []string {
	if r.Null {
		return []string{""}
	}
	return []string{r.Revenue.String()}
}

// Q19 is Discounted Revenue. The predicates common to the three disjuncts
// and the union of their ranges go into the scans; each joined pair is then
// checked against the disjunct its part belongs to:
//
//	lineitem (AIR or AIR REG, DELIVER IN PERSON, quantity 1..30, in the scan)
//	  ─Join on partkey─ part (Brand#12/23/34, size 1..15 in the scan; the
//	                          branch's container and size: Filter), broadcast
//	  ─FlatMap(the branch's quantity range)─AggregateAll(Σ revenue)
func Q19(env *dataset.Env, dir string) (*query.Rows[Q19Row], error) {
	s := query.NewScanner(env, dir)
	lines := query.Scan[q19Line](s, "lineitem",
		query.Where("l_shipmode", parquet.In, "AIR", "AIR REG"),
		query.Where("l_shipinstruct", parquet.Eq, "DELIVER IN PERSON"),
		query.Where("l_quantity", parquet.Between, 1, 30))
	parts := query.Scan[q19Part](s, "part",
		query.Where("p_brand", parquet.In, "Brand#12", "Brand#23", "Brand#34"),
		query.Where("p_size", parquet.Between, 1, 15)).
		Filter(func(p q19Part) bool { return p.branch() >= 0 })

	pairs := dataset.Join(lines, parts,
		func(l q19Line) int64 { return l.PartKey }, func(p q19Part) int64 { return p.PartKey },
		func(l *q19Line, p *q19Part) q19Pair { return q19Pair{*l, int64(p.branch())} }).
		WithJoinHint(dataset.BroadcastHashSecond).On("partkey").Forwards("partkey")
	rev := dataset.FlatMap(pairs, q19Revenue)
	sum := dataset.AggregateAll(rev, agg.Func[Q19Row, Q19Row]{
		Init:  func(r Q19Row) Q19Row { return r },
		Merge: func(a, b Q19Row) Q19Row { return Q19Row{Revenue: a.Revenue.Add(b.Revenue)} },
	})
	return query.NewRows(dataset.Collect(sum), []Q19Row{{Null: true}}), s.Err()
}
