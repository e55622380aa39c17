package dbgen

// Supplier is a row of supplier. Money is in cents.
type Supplier struct {
	SuppKey   int64  `parquet:"s_suppkey,int(64)"`
	Name      string `parquet:"s_name,string"`
	Address   string `parquet:"s_address,string"`
	NationKey int32  `parquet:"s_nationkey,int(32)"`
	Phone     string `parquet:"s_phone,string"`
	AcctBal   int64  `parquet:"s_acctbal,decimal(2:15)"`
	Comment   string `parquet:"s_comment,string"`
}

// supplierGen makes supplier rows (dbgen's mk_supp).
type supplierGen struct {
	st streams
	ar arena
}

func newSupplierGen(first int64) *supplierGen {
	g := &supplierGen{st: newStreams(tSupplier)}
	g.st.skip(first)
	return g
}

// Better Business Bureau comments: about 10 suppliers in 10000 get
// "Customer ...Complaints" or "Customer ...Recommends" written over their
// comment (the first half complaints).
const (
	bbbBase     = "Customer "
	bbbComplain = "Complaints"
	bbbCommend  = "Recommends"
	bbbLen      = 19
)

// next makes supplier key (1-based).
func (g *supplierGen) next(key int64, s *Supplier) {
	st := &g.st
	s.SuppKey = key
	s.Name = g.ar.end(appendInt(append(g.ar.begin(18), "Supplier#"...), key, 9))
	s.Address = g.ar.end(st.vstr(g.ar.begin(40), sSAddr, 25))
	n := st.random(sSNtrg, 0, int64(len(nations)-1))
	s.NationKey = int32(n)
	s.Phone = g.ar.end(st.phone(g.ar.begin(15), sSPhne, n))
	s.AcctBal = st.random(sSAbal, -99999, 999999)
	s.Comment = st.text(sSCmnt, 63)
	clen := int64(len(s.Comment))
	badPress := st.random(sBBBCmnt, 1, 10000)
	typ := st.random(sBBBType, 0, 100)
	noise := st.random(sBBBJnk, 0, clen-bbbLen)
	off := st.random(sBBBOffset, 0, clen-(bbbLen+noise))
	if badPress <= 10 {
		b := append(g.ar.begin(len(s.Comment)), s.Comment...)
		c := b[len(b)-len(s.Comment):]
		copy(c[off:], bbbBase)
		if typ < 50 {
			copy(c[int64(len(bbbBase))+off+noise:], bbbComplain)
		} else {
			copy(c[int64(len(bbbBase))+off+noise:], bbbCommend)
		}
		s.Comment = g.ar.end(b)
	}
	st.rowStop()
}
