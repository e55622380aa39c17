package dbgen

// Order is a row of orders. Money is in cents; dates are days since
// 1970-01-01.
type Order struct {
	OrderKey      int64  `parquet:"o_orderkey,int(64)"`
	CustKey       int64  `parquet:"o_custkey,int(64)"`
	OrderStatus   string `parquet:"o_orderstatus,string"`
	TotalPrice    int64  `parquet:"o_totalprice,decimal(2:15)"`
	OrderDate     int32  `parquet:"o_orderdate,date"`
	OrderPriority string `parquet:"o_orderpriority,string"`
	Clerk         string `parquet:"o_clerk,string"`
	ShipPriority  int32  `parquet:"o_shippriority,int(32)"`
	Comment       string `parquet:"o_comment,string"`
}

// Lineitem is a row of lineitem. Quantity, prices, discount and tax are
// DECIMAL(15,2) unscaled (hundredths); dates are days since 1970-01-01.
type Lineitem struct {
	OrderKey      int64  `parquet:"l_orderkey,int(64)"`
	PartKey       int64  `parquet:"l_partkey,int(64)"`
	SuppKey       int64  `parquet:"l_suppkey,int(64)"`
	LineNumber    int64  `parquet:"l_linenumber,int(64)"`
	Quantity      int64  `parquet:"l_quantity,decimal(2:15)"`
	ExtendedPrice int64  `parquet:"l_extendedprice,decimal(2:15)"`
	Discount      int64  `parquet:"l_discount,decimal(2:15)"`
	Tax           int64  `parquet:"l_tax,decimal(2:15)"`
	ReturnFlag    string `parquet:"l_returnflag,string"`
	LineStatus    string `parquet:"l_linestatus,string"`
	ShipDate      int32  `parquet:"l_shipdate,date"`
	CommitDate    int32  `parquet:"l_commitdate,date"`
	ReceiptDate   int32  `parquet:"l_receiptdate,date"`
	ShipInstruct  string `parquet:"l_shipinstruct,string"`
	ShipMode      string `parquet:"l_shipmode,string"`
	Comment       string `parquet:"l_comment,string"`
}

const (
	// dateBase is 1992-01-01, dbgen's STARTDATE, in days since 1970-01-01.
	dateBase = 8035
	// currentDate is 1995-06-17 (dbgen's CURRENTDATE) as days after
	// 1992-01-01: lines received by then are returned (R/A), lines shipped
	// by then are filled (F).
	currentDate = 1263
	// orderDates is the number of order dates: 1992-01-01 through
	// 151 days before 1998-12-31.
	orderDates = 2557 - (121 + 30) - 1 + 1
)

// orderGen makes an order and its lines (dbgen's mk_order).
type orderGen struct {
	st       streams
	ar       arena
	custs    int64 // o_custkey's range
	parts    int64 // l_partkey's range
	supps    int64
	clerks   int64
	statuses [3]string
}

func newOrderGen(sc Scale, first int64) *orderGen {
	g := &orderGen{
		st:     newStreams(tOrders, tLineitem),
		custs:  sc.cust * sc.scale,
		parts:  sc.part * sc.scale,
		supps:  sc.supp * sc.scale,
		clerks: max(sc.scale*1000, 1000),
	}
	g.st.skip(first)
	return g
}

// orderKey is the sparse key of the i-th order (1-based; dbgen's mk_sparse):
// of every 32 keys only the first 8 are used.
func orderKey(i int64) int64 {
	return (i>>3)<<5 | i&7
}

// next makes order i (1-based) and its lines; it returns the number of lines.
func (g *orderGen) next(i int64, o *Order, ls *[maxLines]Lineitem) int {
	st := &g.st
	o.OrderKey = orderKey(i)
	ck := st.random(sOCkey, 1, g.custs)
	// a third of the customers (every key divisible by 3) has no orders
	for delta := int64(1); ck%3 == 0; delta = -delta {
		ck = min(ck+delta, g.custs)
	}
	o.CustKey = ck
	odate := st.random(sOOdate, 0, orderDates-1)
	o.OrderDate = int32(dateBase + odate)
	o.OrderPriority = distPriorities.text[distPriorities.pick(st, sOPrio)]
	clerk := st.random(sOClrk, 1, g.clerks)
	o.Clerk = g.ar.end(appendInt(append(g.ar.begin(15), "Clerk#"...), clerk, 9))
	o.Comment = st.text(sOCmnt, 49)
	o.ShipPriority = 0
	o.TotalPrice = 0
	n := int(st.random(sOLcnt, 1, maxLines))
	filled := 0
	for k := range n {
		l := &ls[k]
		l.OrderKey = o.OrderKey
		l.LineNumber = int64(k + 1)
		qty := st.random(sLQty, 1, 50)
		l.Quantity = qty * 100
		l.Discount = st.random(sLDcnt, 0, 10)
		l.Tax = st.random(sLTax, 0, 8)
		l.ShipInstruct = distInstruct.text[distInstruct.pick(st, sLShip)]
		l.ShipMode = distShipModes.text[distShipModes.pick(st, sLSmode)]
		l.Comment = st.text(sLCmnt, 27)
		l.PartKey = st.random(sLPkey, 1, g.parts)
		supp := st.random(sLSkey, 0, 3)
		l.SuppKey = partSupp(l.PartKey, supp, g.supps)
		l.ExtendedPrice = retailPrice(l.PartKey) * qty
		o.TotalPrice += l.ExtendedPrice * (100 - l.Discount) / 100 * (100 + l.Tax) / 100
		sdate := odate + st.random(sLSdte, 1, 121)
		cdate := odate + st.random(sLCdte, 30, 90)
		rdate := sdate + st.random(sLRdte, 1, 30)
		l.ShipDate = int32(dateBase + sdate)
		l.CommitDate = int32(dateBase + cdate)
		l.ReceiptDate = int32(dateBase + rdate)
		if rdate <= currentDate {
			l.ReturnFlag = distRFlags.text[distRFlags.pick(st, sLRflg)]
		} else {
			l.ReturnFlag = "N"
		}
		if sdate <= currentDate {
			filled++
			l.LineStatus = "F"
		} else {
			l.LineStatus = "O"
		}
	}
	switch filled {
	case n:
		o.OrderStatus = "F"
	case 0:
		o.OrderStatus = "O"
	default:
		o.OrderStatus = "P"
	}
	st.rowStop()
	return n
}
