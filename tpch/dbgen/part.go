package dbgen

// Part is a row of part. Money is in cents.
type Part struct {
	PartKey     int64  `parquet:"p_partkey,int(64)"`
	Name        string `parquet:"p_name,string"`
	Mfgr        string `parquet:"p_mfgr,string"`
	Brand       string `parquet:"p_brand,string"`
	Type        string `parquet:"p_type,string"`
	Size        int32  `parquet:"p_size,int(32)"`
	Container   string `parquet:"p_container,string"`
	RetailPrice int64  `parquet:"p_retailprice,decimal(2:15)"`
	Comment     string `parquet:"p_comment,string"`
}

// PartSupp is a row of partsupp. Money is in cents.
type PartSupp struct {
	PartKey    int64  `parquet:"ps_partkey,int(64)"`
	SuppKey    int64  `parquet:"ps_suppkey,int(64)"`
	AvailQty   int64  `parquet:"ps_availqty,int(64)"`
	SupplyCost int64  `parquet:"ps_supplycost,decimal(2:15)"`
	Comment    string `parquet:"ps_comment,string"`
}

// partGen makes a part and its four partsupp rows (dbgen's mk_part).
type partGen struct {
	st      streams
	ar      arena
	sc      Scale
	permute [92]int
}

func newPartGen(sc Scale, first int64) *partGen {
	g := &partGen{st: newStreams(tPart, tPartsupp), sc: sc}
	g.st.skip(first)
	return g
}

// retailPrice is p_retailprice of part p in cents (dbgen's rpb_routine).
func retailPrice(p int64) int64 {
	return 90000 + (p/10)%20001 + (p%1000)*100
}

// partSupp returns the i-th supplier of part p among n suppliers (dbgen's
// PART_SUPP_BRIDGE), also l_suppkey's formula.
func partSupp(p, i, n int64) int64 {
	return (p+i*(n/suppPerPart+(p-1)/n))%n + 1
}

// next makes part key (1-based) and its partsupp rows.
func (g *partGen) next(key int64, p *Part, ps *[suppPerPart]PartSupp) {
	st := &g.st
	p.PartKey = key
	// agg_str: permute all colors with the name stream, take the first five.
	n := len(distColors.text)
	for i := range n {
		g.permute[i] = i
	}
	for i := range n {
		j := st.random(sPName, int64(i), int64(n-1))
		g.permute[i], g.permute[j] = g.permute[j], g.permute[i]
	}
	b := g.ar.begin(60)
	for i := range 5 {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, distColors.text[g.permute[i]]...)
	}
	p.Name = g.ar.end(b)
	mfgr := st.random(sPMfg, 1, 5)
	p.Mfgr = g.ar.end(appendInt(append(g.ar.begin(14), "Manufacturer#"...), mfgr, 1))
	brand := st.random(sPBrnd, 1, 5)
	p.Brand = g.ar.end(appendInt(append(g.ar.begin(8), "Brand#"...), mfgr*10+brand, 2))
	p.Type = distTypes.text[distTypes.pick(st, sPType)]
	p.Size = int32(st.random(sPSize, 1, 50))
	p.Container = distContainers.text[distContainers.pick(st, sPCntr)]
	p.RetailPrice = retailPrice(key)
	p.Comment = st.text(sPCmnt, 14)
	supps := g.sc.supp * g.sc.scale
	for i := range ps {
		s := &ps[i]
		s.PartKey = key
		s.SuppKey = partSupp(key, int64(i), supps)
		s.AvailQty = st.random(sPSQty, 1, 9999)
		s.SupplyCost = st.random(sPSScst, 100, 100000)
		s.Comment = st.text(sPSCmnt, 124)
	}
	st.rowStop()
}
