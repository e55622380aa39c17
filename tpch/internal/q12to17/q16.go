package q12to17

import (
	"strconv"
	"strings"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q16Columns = []string{"p_brand", "p_type", "p_size", "supplier_cnt"}

// q16Part is the part projection of Q16.
type q16Part struct {
	PartKey int64  `weir:"p_partkey"`
	Brand   string `weir:"p_brand"`
	Type    string `weir:"p_type"`
	Size    int64  `weir:"p_size"`
}

// q16PartSupp is the partsupp projection of Q16.
type q16PartSupp struct {
	PartKey int64 `weir:"ps_partkey"`
	SuppKey int64 `weir:"ps_suppkey"`
}

// q16Supplier is a supplier's key and comment.
type q16Supplier struct {
	SuppKey int64  `weir:"s_suppkey"`
	Comment string `weir:"s_comment"`
}

// q16Group is the grouping key: a part's brand, type and size.
type q16Group struct {
	Brand string
	Type  string
	Size  int64
}

// q16Offer is a supplier of a part of a group (the group's fields, then the
// supplier: the key of the Distinct).
type q16Offer struct {
	Brand   string
	Type    string
	Size    int64
	SuppKey int64
}

// Q16Row is a row of Q16 (Parts/Supplier Relationship).
type Q16Row struct {
	Group q16Group
	Count int64 // supplier_cnt: distinct suppliers
}

// Fields implements Row.
func (r Q16Row) Fields() []string {
	return []string{r.Group.Brand, r.Group.Type, strconv.FormatInt(r.Group.Size, 10), strconv.FormatInt(r.Count, 10)}
}

// q16Wanted is the SQL's p_brand <> 'Brand#45' AND p_type NOT LIKE
// 'MEDIUM POLISHED%' (the sizes are filtered in the scan).
func q16Wanted(p q16Part) bool {
	return p.Brand != "Brand#45" && !strings.HasPrefix(p.Type, "MEDIUM POLISHED")
}

// q16Complaint is the SQL's s_comment LIKE '%Customer%Complaints%'.
func q16Complaint(s q16Supplier) bool {
	i := strings.Index(s.Comment, "Customer")
	return i >= 0 && strings.Contains(s.Comment[i+len("Customer"):], "Complaints")
}

// Q16 is Parts/Supplier Relationship:
//
//	partsupp ─Join on partkey─ part (8 sizes in the scan; brand, type: Filter;
//	  its keys filter the partsupp scan)
//	  ─AntiJoin on suppkey─ supplier (comment LIKE '%Customer%Complaints%': Filter), broadcast
//	  ─Distinct(group, suppkey)─GroupBy(group).Reduce(count)
//	  ─SortBy(supplier_cnt desc, brand, type, size)
//
// ps_suppkey NOT IN (...) is an anti-join: s_suppkey is never NULL.
// count(DISTINCT ps_suppkey) is a Distinct on (group, supplier) followed by a
// count per group.
func Q16(env *dataset.Env, dir string) (*query.Rows[Q16Row], error) {
	s := query.NewScanner(env, dir)
	parts := query.Scan[q16Part](s, "part", query.Where("p_size", parquet.In, 49, 14, 23, 45, 19, 3, 36, 9)).Filter(q16Wanted)
	partsupp := query.Scan[q16PartSupp](s, "partsupp")
	complaints := query.Scan[q16Supplier](s, "supplier").Filter(q16Complaint)

	// the parts first: their keys filter the partsupp scan
	offered := dataset.Join(partsupp, parts,
		func(ps q16PartSupp) int64 { return ps.PartKey }, func(p q16Part) int64 { return p.PartKey },
		func(ps *q16PartSupp, p *q16Part) q16Offer {
			return q16Offer{Brand: p.Brand, Type: p.Type, Size: p.Size, SuppKey: ps.SuppKey}
		}).On("partkey").KeyColumns("ps_partkey", "")
	offers := dataset.AntiJoin(offered, complaints,
		func(o q16Offer) int64 { return o.SuppKey }, func(s q16Supplier) int64 { return s.SuppKey }).
		WithJoinHint(dataset.BroadcastHashSecond).On("suppkey")
	distinct := dataset.Distinct(offers, func(o q16Offer) q16Offer { return o }).On("p_brand", "p_type", "p_size", "suppkey")
	ones := dataset.Map(distinct, func(o q16Offer) Q16Row {
		return Q16Row{Group: q16Group{Brand: o.Brand, Type: o.Type, Size: o.Size}, Count: 1}
	}).Forwards("p_brand", "p_type", "p_size")
	counts := dataset.GroupBy(ones, func(r Q16Row) q16Group { return r.Group }).On("p_brand", "p_type", "p_size").
		Reduce(func(a, b Q16Row) Q16Row {
			a.Count += b.Count
			return a
		})
	sorted := dataset.SortBy(counts,
		dataset.By(func(r Q16Row) int64 { return r.Count }, dataset.Descending),
		dataset.By(func(r Q16Row) q16Group { return r.Group }, dataset.Ascending))
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
