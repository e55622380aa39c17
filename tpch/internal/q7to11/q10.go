package q7to11

import (
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q10Columns = []string{"c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment"}

// q10Order is the orders projection of Q10.
type q10Order struct {
	OrderKey int64 `weir:"o_orderkey"`
	CustKey  int64 `weir:"o_custkey"`
}

// q10Customer is the customer projection of Q10.
type q10Customer struct {
	CustKey   int64           `weir:"c_custkey"`
	Name      string          `weir:"c_name"`
	Address   string          `weir:"c_address"`
	NationKey int64           `weir:"c_nationkey"`
	Phone     string          `weir:"c_phone"`
	AcctBal   parquet.Decimal `weir:"c_acctbal"`
	Comment   string          `weir:"c_comment"`
}

// q10Revenue is a customer's lost revenue.
type q10Revenue struct {
	CustKey int64
	Revenue parquet.Decimal
}

// Q10Row is a row of Q10 (Returned Item Reporting).
type Q10Row struct {
	CustKey   int64
	Name      string
	Revenue   parquet.Decimal // scale 4
	AcctBal   parquet.Decimal
	Nation    string
	Address   string
	Phone     string
	Comment   string
	NationKey int64 // the join key of nation; not a column of the result
}

// Fields implements Row.
func (r Q10Row) Fields() []string {
	return []string{strconv.FormatInt(r.CustKey, 10), r.Name, r.Revenue.String(), r.AcctBal.String(),
		r.Nation, r.Address, r.Phone, r.Comment}
}

// Q10 is Returned Item Reporting:
//
//	lineitem (l_returnflag = 'R') ─Join on orderkey─ orders (1993 Q4)
//	  ─GroupBy(custkey).Reduce(Σ revenue)─Join─ customer ─Join─ nation (broadcast)
//	  ─Sort(revenue desc, custkey)─First(20)
//
// The SQL groups by c_custkey and columns that are functions of it, so the
// revenue is summed per customer key before the customer's columns are
// joined in: the join then sees one record per customer, not per line.
func Q10(env *dataset.Env, dir string) (*query.Rows[Q10Row], error) {
	s := query.NewScanner(env, dir)
	lines := query.Scan[query.LinePrice](s, "lineitem", query.Where("l_returnflag", parquet.Eq, "R"))
	orders := query.Scan[q10Order](s, "orders",
		query.Where("o_orderdate", parquet.Ge, query.Date(1993, 10, 1)), query.Where("o_orderdate", parquet.Lt, query.Date(1994, 1, 1)))
	custs := query.Scan[q10Customer](s, "customer")
	nations := query.Scan[query.Nation](s, "nation")

	lost := dataset.Join(lines, orders,
		func(l query.LinePrice) int64 { return l.OrderKey }, func(o q10Order) int64 { return o.OrderKey },
		func(l *query.LinePrice, o *q10Order) q10Revenue {
			return q10Revenue{CustKey: o.CustKey, Revenue: query.Discounted(l.ExtendedPrice, l.Discount)}
		}).On("orderkey").Forwards("custkey").KeyColumns("l_orderkey", "o_orderkey")
	perCust := dataset.GroupBy(lost, func(r q10Revenue) int64 { return r.CustKey }).On("custkey").Reduce(func(a, b q10Revenue) q10Revenue {
		a.Revenue = a.Revenue.Add(b.Revenue)
		return a
	})
	withCust := dataset.Join(perCust, custs,
		func(r q10Revenue) int64 { return r.CustKey }, func(c q10Customer) int64 { return c.CustKey },
		func(r *q10Revenue, c *q10Customer) Q10Row {
			return Q10Row{CustKey: c.CustKey, Name: c.Name, Revenue: r.Revenue, AcctBal: c.AcctBal,
				Address: c.Address, Phone: c.Phone, Comment: c.Comment, NationKey: c.NationKey}
		}).On("custkey").Forwards("custkey", "nationkey")
	named := dataset.Join(withCust, nations,
		func(r Q10Row) int64 { return r.NationKey }, func(n query.Nation) int64 { return n.NationKey },
		func(r *Q10Row, n *query.Nation) Q10Row {
			out := *r
			out.Nation = n.Name
			return out
		}).WithJoinHint(dataset.BroadcastHashSecond).On("nationkey").Forwards("custkey", "nationkey")
	top := dataset.Sort(named, func(r Q10Row) query.RevenueDesc[int64] {
		return query.RevenueDesc[int64]{NegRevenue: query.NegRevenue(r.Revenue), Then: r.CustKey}
	}, dataset.Ascending).First(20)
	return query.NewRows(dataset.Collect(top), nil), s.Err()
}
