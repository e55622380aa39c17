package parquet

// The TPC-H tables as DuckDB writes them: keys INT64/INT32, money
// DECIMAL(15,2) as INT64, dates as INT32 DATE, text as UTF-8.

type Lineitem struct {
	OrderKey      int64   `weir:"l_orderkey"`
	PartKey       int64   `weir:"l_partkey"`
	SuppKey       int64   `weir:"l_suppkey"`
	LineNumber    int64   `weir:"l_linenumber"`
	Quantity      Decimal `weir:"l_quantity"`
	ExtendedPrice Decimal `weir:"l_extendedprice"`
	Discount      Decimal `weir:"l_discount"`
	Tax           Decimal `weir:"l_tax"`
	ReturnFlag    string  `weir:"l_returnflag"`
	LineStatus    string  `weir:"l_linestatus"`
	ShipDate      Date    `weir:"l_shipdate"`
	CommitDate    Date    `weir:"l_commitdate"`
	ReceiptDate   Date    `weir:"l_receiptdate"`
	ShipInstruct  string  `weir:"l_shipinstruct"`
	ShipMode      string  `weir:"l_shipmode"`
	Comment       string  `weir:"l_comment"`
}

type Orders struct {
	OrderKey      int64   `weir:"o_orderkey"`
	CustKey       int64   `weir:"o_custkey"`
	OrderStatus   string  `weir:"o_orderstatus"`
	TotalPrice    float64 `weir:"o_totalprice"`
	OrderDate     Date    `weir:"o_orderdate"`
	OrderPriority string  `weir:"o_orderpriority"`
	Clerk         string  `weir:"o_clerk"`
	ShipPriority  int32   `weir:"o_shippriority"`
	Comment       string  `weir:"o_comment"`
}

type Customer struct {
	CustKey    int64   `weir:"c_custkey"`
	Name       string  `weir:"c_name"`
	Address    string  `weir:"c_address"`
	NationKey  int32   `weir:"c_nationkey"`
	Phone      string  `weir:"c_phone"`
	AcctBal    Decimal `weir:"c_acctbal"`
	MktSegment string  `weir:"c_mktsegment"`
	Comment    string  `weir:"c_comment"`
}

type Part struct {
	PartKey     int64   `weir:"p_partkey"`
	Name        string  `weir:"p_name"`
	Mfgr        string  `weir:"p_mfgr"`
	Brand       string  `weir:"p_brand"`
	Type        string  `weir:"p_type"`
	Size        int32   `weir:"p_size"`
	Container   string  `weir:"p_container"`
	RetailPrice float64 `weir:"p_retailprice"`
	Comment     string  `weir:"p_comment"`
}

type Partsupp struct {
	PartKey    int64   `weir:"ps_partkey"`
	SuppKey    int64   `weir:"ps_suppkey"`
	AvailQty   int64   `weir:"ps_availqty"`
	SupplyCost Decimal `weir:"ps_supplycost"`
	Comment    []byte  `weir:"ps_comment"`
}

type Supplier struct {
	SuppKey   int64   `weir:"s_suppkey"`
	Name      string  `weir:"s_name"`
	Address   string  `weir:"s_address"`
	NationKey int64   `weir:"s_nationkey"`
	Phone     string  `weir:"s_phone"`
	AcctBal   float64 `weir:"s_acctbal"`
	Comment   string  `weir:"s_comment"`
}

type Nation struct {
	NationKey int64   `weir:"n_nationkey"`
	Name      string  `weir:"n_name"`
	RegionKey *int64  `weir:"n_regionkey"`
	Comment   *string `weir:"n_comment"`
}

type Region struct {
	RegionKey int8   `weir:"r_regionkey"`
	Name      string `weir:"r_name"`
	Comment   string `weir:"r_comment"`
}
