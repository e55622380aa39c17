// Package query holds what the TPC-H queries share: the scan of a table's
// Parquet files as a typed data set, the typed rows a query returns, the
// projections several queries read, and the decimal and date helpers.
//
// The queries themselves are in the packages beside it, a few queries
// each: the compiler's memory grows with a package's generic
// instantiations, and one package of all 22 queries needed 5 GB to
// compile. Package tpch gathers them.
package query

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
)

// Row is a typed result row: Fields formats it as CSV fields, one per column
// of its query's SELECT, in that order (DECIMAL with its scale, DATE as
// YYYY-MM-DD, NULL as an empty field).
type Row interface {
	Fields() []string
}

// Rows is a query's typed result. Its values are available once the Env the
// query was built on has executed successfully.
type Rows[T Row] struct {
	c *dataset.Collected[T]
	// ifEmpty is the result when the program produced no record: a global
	// aggregate over no rows is one row of NULLs in SQL.
	ifEmpty []T
}

// NewRows returns the rows c collects, or ifEmpty when it collects none
// (nil: no rows).
func NewRows[T Row](c *dataset.Collected[T], ifEmpty []T) *Rows[T] {
	return &Rows[T]{c: c, ifEmpty: ifEmpty}
}

// Values returns the rows in the query's ORDER BY order; call it only after
// Execute has succeeded.
func (r *Rows[T]) Values() []T {
	if v := r.c.Values(); len(v) > 0 || r.ifEmpty == nil {
		return v
	}
	return r.ifEmpty
}

// FormatFloat formats a DOUBLE as DuckDB does: the shortest form that reads
// back as the same float64.
func FormatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// RevenueDesc orders rows by revenue descending, then by a tie-breaker
// ascending: the revenue's unscaled value at scale 4, negated.
type RevenueDesc[T cmp.Ordered] struct {
	NegRevenue int64
	Then       T
}

// NegRevenue returns −revenue at scale 4, an ascending sort key for revenue
// descending (the sums all have scale 4; Rescale makes that explicit).
func NegRevenue(d parquet.Decimal) int64 { return -d.Rescale(4).Unscaled }

// The projection structs shared by several queries. A scan decodes only the
// columns its struct names, so each query defines its own struct where it
// needs a different set of columns (in its own file).

// Nation is the nation table's key, name and region.
type Nation struct {
	NationKey int64  `weir:"n_nationkey"`
	Name      string `weir:"n_name"`
	RegionKey int64  `weir:"n_regionkey"`
}

// Region is the region table's key (its name is filtered in the scan).
type Region struct {
	RegionKey int64 `weir:"r_regionkey"`
}

// LinePrice is a lineitem's order and discounted price inputs.
type LinePrice struct {
	OrderKey      int64           `weir:"l_orderkey"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
}

// One is the DECIMAL 1.00 of the SQL's (1 - l_discount) and (1 + l_tax).
var One = parquet.NewDecimal(100, 2)

// Discounted returns price × (1 − discount), exactly (scale 4 for TPC-H's
// DECIMAL(15,2) columns).
func Discounted(price, discount parquet.Decimal) parquet.Decimal {
	return price.Mul(One.Sub(discount))
}

// Date is a literal date of a query.
func Date(y, m, d int) parquet.Date { return parquet.MakeDate(y, time.Month(m), d) }

// Scanner opens the tables of one data directory as sources of one program.
// The first error is kept and returned by Err; scans after it return empty
// data sets, so a query builds its whole program and checks once.
type Scanner struct {
	env *dataset.Env
	dir string
	e   error
}

// NewScanner returns a Scanner of the tables in dir.
func NewScanner(env *dataset.Env, dir string) *Scanner {
	s := &Scanner{env: env, dir: dir}
	if fi, err := os.Stat(dir); err != nil {
		s.e = fmt.Errorf("data directory: %w", err)
	} else if !fi.IsDir() {
		s.e = fmt.Errorf("data directory %s is not a directory", dir)
	}
	return s
}

// Err returns the first error of a scan.
func (s *Scanner) Err() error { return s.e }

// Scan returns the rows of table (<dir>/<table>.parquet) as T, reading only
// T's columns and the rows that pass the filters.
func Scan[T any](s *Scanner, table string, filters ...parquet.Option) *dataset.DataSet[T] {
	if s.e != nil {
		return dataset.FromSlice[T](s.env, nil)
	}
	src, err := parquet.Open[T](filepath.Join(s.dir, table+".parquet"), filters...)
	if err != nil {
		s.e = err // the parquet package names the file
		return dataset.FromSlice[T](s.env, nil)
	}
	return dataset.FromSource(s.env, table, src)
}

// Where is parquet.Where, shorter.
func Where(column string, op parquet.Op, values ...any) parquet.Option {
	return parquet.Where(column, op, values...)
}
