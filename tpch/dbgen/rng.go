package dbgen

// The random number streams of dbgen. Every column (or group of columns) draws
// from its own stream, a Park–Miller "minimum standard" generator
// (x' = 16807·x mod 2³¹−1) with a fixed starting seed. Each stream has a
// boundary: the number of draws one row of its table may use. After a row,
// rowStop advances every stream of the table to its boundary, so row i of a
// table always starts from the seed advanced by i·boundary draws, whatever the
// row before it used. That is what lets a generator start at any row
// (skip) and what makes a parallel run equal a sequential one.

const (
	pmModulus    = 2147483647
	pmMultiplier = 16807
	dM           = 2147483647.0
	maxLong      = 0x7FFFFFFF
)

// Table identifiers, as dbgen numbers them.
const (
	tPart = iota
	tPartsupp
	tSupplier
	tCustomer
	tOrders
	tLineitem
	tNation = 8
	tRegion = 9
)

// Stream identifiers (dbgen's *_SD constants).
const (
	sPMfg      = 0
	sPBrnd     = 1
	sPType     = 2
	sPSize     = 3
	sPCntr     = 4
	sText      = 5 // the text pool's stream (also P_RCST_SD, unused)
	sPCmnt     = 6
	sPSQty     = 7
	sPSScst    = 8
	sPSCmnt    = 9
	sOSupp     = 10
	sOClrk     = 11
	sOCmnt     = 12
	sOOdate    = 13
	sLQty      = 14
	sLDcnt     = 15
	sLTax      = 16
	sLShip     = 17
	sLSmode    = 18
	sLPkey     = 19
	sLSkey     = 20
	sLSdte     = 21
	sLCdte     = 22
	sLRdte     = 23
	sLRflg     = 24
	sLCmnt     = 25
	sCAddr     = 26
	sCNtrg     = 27
	sCPhne     = 28
	sCAbal     = 29
	sCMseg     = 30
	sCCmnt     = 31
	sSAddr     = 32
	sSNtrg     = 33
	sSPhne     = 34
	sSAbal     = 35
	sSCmnt     = 36
	sPName     = 37
	sOPrio     = 38
	sHVar      = 39
	sOCkey     = 40
	sNCmnt     = 41
	sRCmnt     = 42
	sOLcnt     = 43
	sBBBJnk    = 44
	sBBBType   = 45
	sBBBCmnt   = 46
	sBBBOffset = 47
	numStreams = 48
)

// streamDef is a stream's table, starting seed and boundary (draws per row).
type streamDef struct {
	table    int
	seed     int64
	boundary int64
}

// streamDefs is dbgen's seed table.
var streamDefs = [numStreams]streamDef{
	{tPart, 1, 1},
	{tPart, 46831694, 1},
	{tPart, 1841581359, 1},
	{tPart, 1193163244, 1},
	{tPart, 727633698, 1},
	{-1, 933588178, 1},
	{tPart, 804159733, 2},
	{tPartsupp, 1671059989, suppPerPart},
	{tPartsupp, 1051288424, suppPerPart},
	{tPartsupp, 1961692154, suppPerPart * 2},
	{tOrders, 1227283347, 1},
	{tOrders, 1171034773, 1},
	{tOrders, 276090261, 2},
	{tOrders, 1066728069, 1},
	{tLineitem, 209208115, maxLines},
	{tLineitem, 554590007, maxLines},
	{tLineitem, 721958466, maxLines},
	{tLineitem, 1371272478, maxLines},
	{tLineitem, 675466456, maxLines},
	{tLineitem, 1808217256, maxLines},
	{tLineitem, 2095021727, maxLines},
	{tLineitem, 1769349045, maxLines},
	{tLineitem, 904914315, maxLines},
	{tLineitem, 373135028, maxLines},
	{tLineitem, 717419739, maxLines},
	{tLineitem, 1095462486, maxLines * 2},
	{tCustomer, 881155353, 9},
	{tCustomer, 1489529863, 1},
	{tCustomer, 1521138112, 3},
	{tCustomer, 298370230, 1},
	{tCustomer, 1140279430, 1},
	{tCustomer, 1335826707, 2},
	{tSupplier, 706178559, 9},
	{tSupplier, 110356601, 1},
	{tSupplier, 884434366, 3},
	{tSupplier, 962338209, 1},
	{tSupplier, 1341315363, 2},
	{tPart, 709314158, 92},
	{tOrders, 591449447, 1},
	{tLineitem, 431918286, 1},
	{tOrders, 851767375, 1},
	{tNation, 606179079, 2},
	{tRegion, 1500869201, 2},
	{tOrders, 1434868289, 1},
	{tSupplier, 263032577, 1},
	{tSupplier, 753643799, 1},
	{tSupplier, 202794285, 1},
	{tSupplier, 715851524, 1},
}

// stream is one random number stream: its current value and the draws the
// current row has made.
type stream struct {
	value int64
	usage int64
}

// streams is the state of a generator: the streams of its table(s).
type streams struct {
	s   [numStreams]stream
	ids []int // the streams rowStop advances
}

// newStreams returns the streams of the given tables at their starting seeds.
func newStreams(tables ...int) streams {
	var st streams
	for i, d := range streamDefs {
		st.s[i].value = d.seed
		for _, t := range tables {
			if d.table == t {
				st.ids = append(st.ids, i)
			}
		}
	}
	return st
}

// nextRand is one Park–Miller step.
func nextRand(x int64) int64 { return x * pmMultiplier % pmModulus }

// nthElement returns x advanced by n Park–Miller steps (dbgen's NthElement).
func nthElement(n, x int64) int64 {
	mult := int64(pmMultiplier)
	for n > 0 {
		if n&1 != 0 {
			x = mult * x % pmModulus
		}
		n >>= 1
		mult = mult * mult % pmModulus
	}
	return x
}

// random draws an integer uniformly in [lo, hi] from stream id (dbgen's
// RANDOM / UnifInt, including its floating-point scaling).
func (st *streams) random(id int, lo, hi int64) int64 {
	s := &st.s[id]
	s.value = nextRand(s.value)
	s.usage++
	return lo + int64(float64(s.value)/dM*float64(hi-lo+1))
}

// rowStop ends a row: every stream of the generator's tables is advanced to
// its boundary (dbgen's row_stop_h) and its usage reset.
func (st *streams) rowStop() {
	for _, id := range st.ids {
		s := &st.s[id]
		if n := streamDefs[id].boundary - s.usage; n > 0 {
			s.value = nthElement(n, s.value)
		}
		s.usage = 0
	}
}

// skip advances the generator by rows whole rows, as rows calls of rowStop
// after rows rows would.
func (st *streams) skip(rows int64) {
	for _, id := range st.ids {
		st.s[id].value = nthElement(rows*streamDefs[id].boundary, st.s[id].value)
		st.s[id].usage = 0
	}
}
