package q1to6

import (
	"strconv"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/tpch/internal/query"
)

var Q1Columns = []string{"l_returnflag", "l_linestatus", "sum_qty", "sum_base_price", "sum_disc_price",
	"sum_charge", "avg_qty", "avg_price", "avg_disc", "count_order"}

// q1Line is the lineitem projection of Q1.
type q1Line struct {
	ReturnFlag    string          `weir:"l_returnflag"`
	LineStatus    string          `weir:"l_linestatus"`
	Quantity      parquet.Decimal `weir:"l_quantity"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
	Tax           parquet.Decimal `weir:"l_tax"`
}

// Q1Row is a row of Q1 (Pricing Summary Report): the sums are exact, the
// averages are derived from them.
type Q1Row struct {
	ReturnFlag   string
	LineStatus   string
	SumQty       parquet.Decimal
	SumBasePrice parquet.Decimal
	SumDiscPrice parquet.Decimal // Σ price × (1 − discount), scale 4
	SumCharge    parquet.Decimal // Σ price × (1 − discount) × (1 + tax), scale 6
	SumDisc      parquet.Decimal
	Count        int64
}

// AvgQty returns avg(l_quantity).
func (r Q1Row) AvgQty() float64 { return r.SumQty.Float64() / float64(r.Count) }

// AvgPrice returns avg(l_extendedprice).
func (r Q1Row) AvgPrice() float64 { return r.SumBasePrice.Float64() / float64(r.Count) }

// AvgDisc returns avg(l_discount).
func (r Q1Row) AvgDisc() float64 { return r.SumDisc.Float64() / float64(r.Count) }

// Fields implements Row.
func (r Q1Row) Fields() []string {
	return []string{r.ReturnFlag, r.LineStatus, r.SumQty.String(), r.SumBasePrice.String(),
		r.SumDiscPrice.String(), r.SumCharge.String(), query.FormatFloat(r.AvgQty()), query.FormatFloat(r.AvgPrice()),
		query.FormatFloat(r.AvgDisc()), strconv.FormatInt(r.Count, 10)}
}

// q1Group is Q1's grouping key.
type q1Group struct{ ReturnFlag, LineStatus string }

func q1Key(r Q1Row) q1Group { return q1Group{r.ReturnFlag, r.LineStatus} }

func q1LineKey(l q1Line) q1Group { return q1Group{l.ReturnFlag, l.LineStatus} }

// q1Fold adds a line into its group's accumulator.
func q1Fold(a *Q1Row, l q1Line) {
	if a.Count == 0 {
		a.ReturnFlag, a.LineStatus = l.ReturnFlag, l.LineStatus
	}
	dp := query.Discounted(l.ExtendedPrice, l.Discount)
	a.SumQty = a.SumQty.Add(l.Quantity)
	a.SumBasePrice = a.SumBasePrice.Add(l.ExtendedPrice)
	a.SumDiscPrice = a.SumDiscPrice.Add(dp)
	a.SumCharge = a.SumCharge.Add(dp.Mul(query.One.Add(l.Tax)))
	a.SumDisc = a.SumDisc.Add(l.Discount)
	a.Count++
}

// q1Merge adds the accumulator of another part of a group.
func q1Merge(a *Q1Row, b Q1Row) {
	if a.Count == 0 {
		a.ReturnFlag, a.LineStatus = b.ReturnFlag, b.LineStatus
	}
	a.SumQty = a.SumQty.Add(b.SumQty)
	a.SumBasePrice = a.SumBasePrice.Add(b.SumBasePrice)
	a.SumDiscPrice = a.SumDiscPrice.Add(b.SumDiscPrice)
	a.SumCharge = a.SumCharge.Add(b.SumCharge)
	a.SumDisc = a.SumDisc.Add(b.SumDisc)
	a.Count += b.Count
}

// Q1 is the Pricing Summary Report:
//
//	lineitem (l_shipdate <= 1998-09-02, in the scan)
//	  ─Fold by (flag, status)→ sums per subtask ─merged by key→ sums
//	  ─Sort(flag, status)→ rows
func Q1(env *dataset.Env, dir string) (*query.Rows[Q1Row], error) {
	s := query.NewScanner(env, dir)
	lines := query.Scan[q1Line](s, "lineitem", query.Where("l_shipdate", parquet.Le, query.Date(1998, 9, 2)))
	sums := dataset.Fold(lines, q1LineKey, q1Fold, q1Merge).On("returnflag", "linestatus")
	rows := dataset.Map(sums, func(kv dataset.KV[q1Group, Q1Row]) Q1Row { return kv.Value })
	out := dataset.Collect(dataset.Sort(rows, q1Key, dataset.Ascending).On("returnflag", "linestatus"))
	return query.NewRows(out, nil), s.Err()
}
