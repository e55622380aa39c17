package tpch

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats/parquet"
)

// The naive oracle: every query computed over whole tables held in Go
// slices and maps, with no weir operator, for data sets that have no DuckDB
// answer (the derived tables of variants_test.go).

// The tables with every column some query reads.
type (
	oLine struct {
		OrderKey      int64           `weir:"l_orderkey"`
		PartKey       int64           `weir:"l_partkey"`
		SuppKey       int64           `weir:"l_suppkey"`
		Quantity      parquet.Decimal `weir:"l_quantity"`
		ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
		Discount      parquet.Decimal `weir:"l_discount"`
		Tax           parquet.Decimal `weir:"l_tax"`
		ReturnFlag    string          `weir:"l_returnflag"`
		LineStatus    string          `weir:"l_linestatus"`
		ShipDate      parquet.Date    `weir:"l_shipdate"`
		CommitDate    parquet.Date    `weir:"l_commitdate"`
		ReceiptDate   parquet.Date    `weir:"l_receiptdate"`
		ShipInstruct  string          `weir:"l_shipinstruct"`
		ShipMode      string          `weir:"l_shipmode"`
	}
	oOrder struct {
		OrderKey      int64        `weir:"o_orderkey"`
		CustKey       int64        `weir:"o_custkey"`
		OrderDate     parquet.Date `weir:"o_orderdate"`
		OrderPriority string       `weir:"o_orderpriority"`
		ShipPriority  int64        `weir:"o_shippriority"`
	}
	oCustomer struct {
		CustKey    int64           `weir:"c_custkey"`
		Name       string          `weir:"c_name"`
		Address    string          `weir:"c_address"`
		NationKey  int64           `weir:"c_nationkey"`
		Phone      string          `weir:"c_phone"`
		AcctBal    parquet.Decimal `weir:"c_acctbal"`
		MktSegment string          `weir:"c_mktsegment"`
		Comment    string          `weir:"c_comment"`
	}
	oPart struct {
		PartKey   int64  `weir:"p_partkey"`
		Brand     string `weir:"p_brand"`
		Type      string `weir:"p_type"`
		Size      int64  `weir:"p_size"`
		Container string `weir:"p_container"`
	}
	oSupplier struct {
		SuppKey   int64 `weir:"s_suppkey"`
		NationKey int64 `weir:"s_nationkey"`
	}
	oNation struct {
		NationKey int64  `weir:"n_nationkey"`
		Name      string `weir:"n_name"`
		RegionKey int64  `weir:"n_regionkey"`
	}
	oRegion struct {
		RegionKey int64  `weir:"r_regionkey"`
		Name      string `weir:"r_name"`
	}
)

// db is a TPC-H database in memory.
type db struct {
	lines   []oLine
	orders  []oOrder
	custs   []oCustomer
	parts   []oPart
	supps   []oSupplier
	nations []oNation
	regions []oRegion
}

func readTable[T any](t *testing.T, path string) []T {
	t.Helper()
	src, err := parquet.Open[T](path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	splits, err := src.Splits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, sp := range splits {
		if err := src.Read(ctx, sp, func(b []T) error { out = append(out, b...); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func loadDB(t *testing.T, dir string) *db {
	t.Helper()
	p := func(table string) string { return dir + "/" + table + ".parquet" }
	return &db{
		lines:   readTable[oLine](t, p("lineitem")),
		orders:  readTable[oOrder](t, p("orders")),
		custs:   readTable[oCustomer](t, p("customer")),
		parts:   readTable[oPart](t, p("part")),
		supps:   readTable[oSupplier](t, p("supplier")),
		nations: readTable[oNation](t, p("nation")),
		regions: readTable[oRegion](t, p("region")),
	}
}

var zero4 = parquet.NewDecimal(0, 4)

func rev(l *oLine) parquet.Decimal {
	return l.ExtendedPrice.Mul(parquet.NewDecimal(100, 2).Sub(l.Discount))
}

func fields[T Row](rows []T) [][]string {
	out := make([][]string, len(rows))
	for i := range rows {
		out[i] = rows[i].Fields()
	}
	return out
}

// oracle returns query n's rows over d.
func (d *db) oracle(n int) [][]string {
	switch n {
	case 1:
		return fields(d.q1())
	case 3:
		return fields(d.q3())
	case 5:
		return fields(d.q5())
	case 6:
		return fields(d.q6())
	case 10:
		return fields(d.q10())
	case 12:
		return fields(d.q12())
	case 14:
		return fields(d.q14())
	case 19:
		return fields(d.q19())
	}
	panic("no oracle")
}

func (d *db) q1() []Q1Row {
	groups := map[[2]string]*Q1Row{}
	cut := parquet.MakeDate(1998, 9, 2)
	for i := range d.lines {
		l := &d.lines[i]
		if l.ShipDate > cut {
			continue
		}
		g := groups[[2]string{l.ReturnFlag, l.LineStatus}]
		if g == nil {
			g = &Q1Row{ReturnFlag: l.ReturnFlag, LineStatus: l.LineStatus, SumDiscPrice: zero4, SumCharge: parquet.NewDecimal(0, 6)}
			groups[[2]string{l.ReturnFlag, l.LineStatus}] = g
		}
		r := rev(l)
		g.SumQty = g.SumQty.Add(l.Quantity)
		g.SumBasePrice = g.SumBasePrice.Add(l.ExtendedPrice)
		g.SumDiscPrice = g.SumDiscPrice.Add(r)
		g.SumCharge = g.SumCharge.Add(r.Mul(parquet.NewDecimal(100, 2).Add(l.Tax)))
		g.SumDisc = g.SumDisc.Add(l.Discount)
		g.Count++
	}
	var out []Q1Row
	for _, g := range groups {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b Q1Row) int {
		return cmp.Or(cmp.Compare(a.ReturnFlag, b.ReturnFlag), cmp.Compare(a.LineStatus, b.LineStatus))
	})
	return out
}

func (d *db) q3() []Q3Row {
	building := map[int64]bool{}
	for _, c := range d.custs {
		if c.MktSegment == "BUILDING" {
			building[c.CustKey] = true
		}
	}
	orders := map[int64]oOrder{}
	for _, o := range d.orders {
		if building[o.CustKey] && o.OrderDate < parquet.MakeDate(1995, 3, 15) {
			orders[o.OrderKey] = o
		}
	}
	sums := map[int64]*Q3Row{}
	for i := range d.lines {
		l := &d.lines[i]
		o, ok := orders[l.OrderKey]
		if !ok || l.ShipDate <= parquet.MakeDate(1995, 3, 15) {
			continue
		}
		s := sums[l.OrderKey]
		if s == nil {
			s = &Q3Row{OrderKey: o.OrderKey, Revenue: zero4, OrderDate: o.OrderDate, ShipPriority: o.ShipPriority}
			sums[l.OrderKey] = s
		}
		s.Revenue = s.Revenue.Add(rev(l))
	}
	var out []Q3Row
	for _, s := range sums {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Q3Row) int {
		return cmp.Or(b.Revenue.Cmp(a.Revenue), cmp.Compare(a.OrderDate, b.OrderDate))
	})
	return out[:min(len(out), 10)]
}

func (d *db) q5() []Q5Row {
	asia := map[int64]bool{}
	for _, r := range d.regions {
		if r.Name == "ASIA" {
			asia[r.RegionKey] = true
		}
	}
	nationName := map[int64]string{}
	for _, n := range d.nations {
		if asia[n.RegionKey] {
			nationName[n.NationKey] = n.Name
		}
	}
	suppNation := map[int64]int64{}
	for _, s := range d.supps {
		suppNation[s.SuppKey] = s.NationKey
	}
	custNation := map[int64]int64{}
	for _, c := range d.custs {
		custNation[c.CustKey] = c.NationKey
	}
	orderCust := map[int64]int64{}
	for _, o := range d.orders {
		if o.OrderDate >= parquet.MakeDate(1994, 1, 1) && o.OrderDate < parquet.MakeDate(1995, 1, 1) {
			orderCust[o.OrderKey] = o.CustKey
		}
	}
	sums := map[string]parquet.Decimal{}
	for i := range d.lines {
		l := &d.lines[i]
		c, ok := orderCust[l.OrderKey]
		if !ok {
			continue
		}
		cn, ok1 := custNation[c]
		sn, ok2 := suppNation[l.SuppKey]
		name, asian := nationName[sn]
		if ok1 && ok2 && cn == sn && asian {
			sums[name] = sums[name].Add(rev(l))
		}
	}
	var out []Q5Row
	for name, r := range sums {
		out = append(out, Q5Row{Nation: name, Revenue: r})
	}
	slices.SortFunc(out, func(a, b Q5Row) int { return b.Revenue.Cmp(a.Revenue) })
	return out
}

func (d *db) q6() []Q6Row {
	sum, found := zero4, false
	for i := range d.lines {
		l := &d.lines[i]
		if l.ShipDate >= parquet.MakeDate(1994, 1, 1) && l.ShipDate < parquet.MakeDate(1995, 1, 1) &&
			l.Discount.Cmp(parquet.NewDecimal(5, 2)) >= 0 && l.Discount.Cmp(parquet.NewDecimal(7, 2)) <= 0 &&
			l.Quantity.Cmp(parquet.NewDecimal(24, 0)) < 0 {
			sum, found = sum.Add(l.ExtendedPrice.Mul(l.Discount)), true
		}
	}
	return []Q6Row{{Revenue: sum, Null: !found}}
}

func (d *db) q10() []Q10Row {
	orderCust := map[int64]int64{}
	for _, o := range d.orders {
		if o.OrderDate >= parquet.MakeDate(1993, 10, 1) && o.OrderDate < parquet.MakeDate(1994, 1, 1) {
			orderCust[o.OrderKey] = o.CustKey
		}
	}
	sums := map[int64]parquet.Decimal{}
	for i := range d.lines {
		l := &d.lines[i]
		if c, ok := orderCust[l.OrderKey]; ok && l.ReturnFlag == "R" {
			if _, seen := sums[c]; !seen {
				sums[c] = zero4
			}
			sums[c] = sums[c].Add(rev(l))
		}
	}
	names := map[int64]string{}
	for _, n := range d.nations {
		names[n.NationKey] = n.Name
	}
	var out []Q10Row
	for _, c := range d.custs {
		r, ok := sums[c.CustKey]
		name, ok2 := names[c.NationKey]
		if ok && ok2 {
			out = append(out, Q10Row{CustKey: c.CustKey, Name: c.Name, Revenue: r, AcctBal: c.AcctBal,
				Nation: name, Address: c.Address, Phone: c.Phone, Comment: c.Comment})
		}
	}
	slices.SortFunc(out, func(a, b Q10Row) int {
		return cmp.Or(b.Revenue.Cmp(a.Revenue), cmp.Compare(a.CustKey, b.CustKey))
	})
	return out[:min(len(out), 20)]
}

func (d *db) q12() []Q12Row {
	prio := map[int64]string{}
	for _, o := range d.orders {
		prio[o.OrderKey] = o.OrderPriority
	}
	counts := map[string]*Q12Row{}
	for i := range d.lines {
		l := &d.lines[i]
		p, ok := prio[l.OrderKey]
		if !ok || (l.ShipMode != "MAIL" && l.ShipMode != "SHIP") || !(l.CommitDate < l.ReceiptDate) ||
			!(l.ShipDate < l.CommitDate) || l.ReceiptDate < parquet.MakeDate(1994, 1, 1) ||
			l.ReceiptDate >= parquet.MakeDate(1995, 1, 1) {
			continue
		}
		c := counts[l.ShipMode]
		if c == nil {
			c = &Q12Row{ShipMode: l.ShipMode}
			counts[l.ShipMode] = c
		}
		if p == "1-URGENT" || p == "2-HIGH" {
			c.High++
		} else {
			c.Low++
		}
	}
	var out []Q12Row
	for _, c := range counts {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Q12Row) int { return cmp.Compare(a.ShipMode, b.ShipMode) })
	return out
}

func (d *db) q14() []Q14Row {
	types := map[int64]string{}
	for _, p := range d.parts {
		types[p.PartKey] = p.Type
	}
	promo, total, found := zero4, zero4, false
	for i := range d.lines {
		l := &d.lines[i]
		ty, ok := types[l.PartKey]
		if !ok || l.ShipDate < parquet.MakeDate(1995, 9, 1) || l.ShipDate >= parquet.MakeDate(1995, 10, 1) {
			continue
		}
		found = true
		total = total.Add(rev(l))
		if strings.HasPrefix(ty, "PROMO") {
			promo = promo.Add(rev(l))
		}
	}
	if !found {
		return []Q14Row{{Null: true}}
	}
	return []Q14Row{{PromoRevenue: 100 * promo.Float64() / total.Float64()}}
}

func (d *db) q19() []Q19Row {
	parts := map[int64]oPart{}
	for _, p := range d.parts {
		parts[p.PartKey] = p
	}
	in := func(s string, set ...string) bool { return slices.Contains(set, s) }
	qty := func(l *oLine, lo int64) bool {
		return l.Quantity.Cmp(parquet.NewDecimal(lo, 0)) >= 0 && l.Quantity.Cmp(parquet.NewDecimal(lo+10, 0)) <= 0
	}
	sum, found := zero4, false
	for i := range d.lines {
		l := &d.lines[i]
		p, ok := parts[l.PartKey]
		if !ok || !in(l.ShipMode, "AIR", "AIR REG") || l.ShipInstruct != "DELIVER IN PERSON" {
			continue
		}
		if p.Brand == "Brand#12" && in(p.Container, "SM CASE", "SM BOX", "SM PACK", "SM PKG") && qty(l, 1) && p.Size >= 1 && p.Size <= 5 ||
			p.Brand == "Brand#23" && in(p.Container, "MED BAG", "MED BOX", "MED PKG", "MED PACK") && qty(l, 10) && p.Size >= 1 && p.Size <= 10 ||
			p.Brand == "Brand#34" && in(p.Container, "LG CASE", "LG BOX", "LG PACK", "LG PKG") && qty(l, 20) && p.Size >= 1 && p.Size <= 15 {
			sum, found = sum.Add(rev(l)), true
		}
	}
	return []Q19Row{{Revenue: sum, Null: !found}}
}

// oracleQueries are the queries the naive oracle computes (the ones the
// variant tests run); every query is compared with DuckDB's answers anyway.
var oracleQueries = []int{1, 3, 5, 6, 10, 12, 14, 19}

// TestOracleMatchesDuckDB checks the oracle itself against DuckDB's answers,
// so that the variants compare weir with something known to be right.
func TestOracleMatchesDuckDB(t *testing.T) {
	d := loadDB(t, sf001)
	for _, n := range oracleQueries {
		s, _ := Query(n)
		want := readAnswer(t, answerPath(sf001, n))
		compare(t, Result{Columns: s.Columns, Rows: d.oracle(n)}, want)
	}
}
