package q18to22

import (
	"slices"
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q22Columns = []string{"cntrycode", "numcust", "totacctbal"}

// q22Codes are the country codes (the phone's first two characters) Q22 selects.
var q22Codes = []string{"13", "31", "23", "29", "30", "18", "17"}

// q22Customer is the customer projection of Q22.
type q22Customer struct {
	CustKey int64           `weir:"c_custkey"`
	Phone   string          `weir:"c_phone"`
	AcctBal parquet.Decimal `weir:"c_acctbal"`
}

// q22Code returns the customer's country code: substring(c_phone FROM 1 FOR 2).
func q22Code(c q22Customer) string {
	if len(c.Phone) < 2 {
		return c.Phone
	}
	return c.Phone[:2]
}

// q22Order is the orders projection of Q22: only the customer is needed.
type q22Order struct {
	CustKey int64 `weir:"o_custkey"`
}

// q22Avg is the accumulator of avg(c_acctbal): an exact sum and a count.
type q22Avg struct {
	Sum   parquet.Decimal
	Count int64
}

// above reports c_acctbal > avg, exactly: acctbal × count > sum.
func (a q22Avg) above(bal parquet.Decimal) bool {
	return a.Count > 0 && bal.Mul(parquet.NewDecimal(a.Count, 0)).Cmp(a.Sum) > 0
}

// Q22Row is a row of Q22 (Global Sales Opportunity).
type Q22Row struct {
	CntryCode  string
	NumCust    int64
	TotAcctBal parquet.Decimal // scale 2
}

// Fields implements Row.
func (r Q22Row) Fields() []string {
	return []string{r.CntryCode, strconv.FormatInt(r.NumCust, 10), r.TotAcctBal.String()}
}

// Q22 is Global Sales Opportunity:
//
//	customer (code in the list: Filter) ─┬─Filter(acctbal > 0)─AggregateAll(Σ acctbal, count)
//	                                     │                        │ broadcast
//	                                     └─FlatMapWithBroadcast(acctbal > avg)
//	  ─AntiJoin on custkey─ orders (those of these customers only, in the scan)
//	  ─GroupBy(cntrycode).Reduce(count, Σ acctbal)─Sort(cntrycode)
//
// The scalar subquery avg(c_acctbal) is one record broadcast to the filter,
// which compares exactly (acctbal × count > Σ) rather than with a rounded
// average; with no qualifying customer the average is NULL and no row passes.
// NOT EXISTS is the anti join.
func Q22(env *dataset.Env, dir string) (*query.Rows[Q22Row], error) {
	s := query.NewScanner(env, dir)
	custs := query.Scan[q22Customer](s, "customer").
		Filter(func(c q22Customer) bool { return slices.Contains(q22Codes, q22Code(c)) })
	orders := query.Scan[q22Order](s, "orders")

	positive := custs.Filter(func(c q22Customer) bool { return c.AcctBal.Unscaled > 0 })
	avg := dataset.AggregateAll(positive, agg.Func[q22Customer, q22Avg]{
		Init:  func(c q22Customer) q22Avg { return q22Avg{Sum: c.AcctBal, Count: 1} },
		Merge: func(a, b q22Avg) q22Avg { return q22Avg{Sum: a.Sum.Add(b.Sum), Count: a.Count + b.Count} },
	})
	rich := dataset.FlatMapWithBroadcast(custs, avg, func(c q22Customer, avg []q22Avg, emit func(q22Customer)) {
		if len(avg) == 1 && avg[0].above(c.AcctBal) {
			emit(c)
		}
	})
	idle := dataset.AntiJoin(rich, orders,
		func(c q22Customer) int64 { return c.CustKey }, func(o q22Order) int64 { return o.CustKey }).On("custkey").
		WithJoinHint(dataset.RepartitionHashFirst). // build the customers, whatever the parallelism
		KeyColumns("", "o_custkey")                 // only the orders of the rich customers matter
	rows := dataset.Map(idle, func(c q22Customer) Q22Row {
		return Q22Row{CntryCode: q22Code(c), NumCust: 1, TotAcctBal: c.AcctBal}
	})
	sums := dataset.GroupBy(rows, func(r Q22Row) string { return r.CntryCode }).On("cntrycode").Reduce(func(a, b Q22Row) Q22Row {
		a.NumCust += b.NumCust
		a.TotAcctBal = a.TotAcctBal.Add(b.TotAcctBal)
		return a
	})
	sorted := dataset.Sort(sums, func(r Q22Row) string { return r.CntryCode }, dataset.Ascending)
	return query.NewRows(dataset.Collect(sorted), nil), s.Err()
}
