package dbgen

// Customer is a row of customer. Money is in cents.
type Customer struct {
	CustKey    int64  `parquet:"c_custkey,int(64)"`
	Name       string `parquet:"c_name,string"`
	Address    string `parquet:"c_address,string"`
	NationKey  int32  `parquet:"c_nationkey,int(32)"`
	Phone      string `parquet:"c_phone,string"`
	AcctBal    int64  `parquet:"c_acctbal,decimal(2:15)"`
	MktSegment string `parquet:"c_mktsegment,string"`
	Comment    string `parquet:"c_comment,string"`
}

// customerGen makes customer rows (dbgen's mk_cust).
type customerGen struct {
	st streams
	ar arena
}

func newCustomerGen(first int64) *customerGen {
	g := &customerGen{st: newStreams(tCustomer)}
	g.st.skip(first)
	return g
}

// next makes customer key (1-based).
func (g *customerGen) next(key int64, c *Customer) {
	st := &g.st
	c.CustKey = key
	c.Name = g.ar.end(appendInt(append(g.ar.begin(18), "Customer#"...), key, 9))
	c.Address = g.ar.end(st.vstr(g.ar.begin(40), sCAddr, 25))
	n := st.random(sCNtrg, 0, int64(len(nations)-1))
	c.NationKey = int32(n)
	c.Phone = g.ar.end(st.phone(g.ar.begin(15), sCPhne, n))
	c.AcctBal = st.random(sCAbal, -99999, 999999)
	c.MktSegment = distSegments.text[distSegments.pick(st, sCMseg)]
	c.Comment = st.text(sCCmnt, 73)
	st.rowStop()
}

// phone appends a phone number of nation n (dbgen's gen_phone): country code
// 10+n, then three random groups.
func (st *streams) phone(b []byte, id int, n int64) []byte {
	acode := st.random(id, 100, 999)
	exchg := st.random(id, 100, 999)
	number := st.random(id, 1000, 9999)
	b = appendInt(b, 10+n%90, 2)
	b = append(b, '-')
	b = appendInt(b, acode, 3)
	b = append(b, '-')
	b = appendInt(b, exchg, 3)
	b = append(b, '-')
	return appendInt(b, number, 4)
}
