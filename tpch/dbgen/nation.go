package dbgen

// Nation is a row of nation.
type Nation struct {
	NationKey int32  `parquet:"n_nationkey,int(32)"`
	Name      string `parquet:"n_name,string"`
	RegionKey int32  `parquet:"n_regionkey,int(32)"`
	Comment   string `parquet:"n_comment,string"`
}

// Region is a row of region.
type Region struct {
	RegionKey int32  `parquet:"r_regionkey,int(32)"`
	Name      string `parquet:"r_name,string"`
	Comment   string `parquet:"r_comment,string"`
}

// Nations returns the 25 rows of nation.
func Nations() []Nation {
	st := newStreams(tNation)
	out := make([]Nation, len(nations))
	for i, n := range nations {
		out[i] = Nation{NationKey: int32(i), Name: n.name, RegionKey: n.region, Comment: st.text(sNCmnt, 72)}
		st.rowStop()
	}
	return out
}

// Regions returns the 5 rows of region.
func Regions() []Region {
	st := newStreams(tRegion)
	out := make([]Region, len(distRegions.text))
	for i, name := range distRegions.text {
		out[i] = Region{RegionKey: int32(i), Name: name, Comment: st.text(sRCmnt, 72)}
		st.rowStop()
	}
	return out
}
