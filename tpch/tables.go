package tpch

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
)

// The projection structs shared by several queries. A scan decodes only the
// columns its struct names, so each query defines its own struct where it
// needs a different set of columns (in its own file).

// nation is the nation table's key, name and region.
type nation struct {
	NationKey int64  `weir:"n_nationkey"`
	Name      string `weir:"n_name"`
	RegionKey int64  `weir:"n_regionkey"`
}

// region is the region table's key (its name is filtered in the scan).
type region struct {
	RegionKey int64 `weir:"r_regionkey"`
}

// linePrice is a lineitem's order and discounted price inputs.
type linePrice struct {
	OrderKey      int64           `weir:"l_orderkey"`
	ExtendedPrice parquet.Decimal `weir:"l_extendedprice"`
	Discount      parquet.Decimal `weir:"l_discount"`
}

// one is the DECIMAL 1.00 of the SQL's (1 - l_discount) and (1 + l_tax).
var one = parquet.NewDecimal(100, 2)

// discounted returns price × (1 − discount), exactly (scale 4 for TPC-H's
// DECIMAL(15,2) columns).
func discounted(price, discount parquet.Decimal) parquet.Decimal {
	return price.Mul(one.Sub(discount))
}

// date is a literal date of a query.
func date(y, m, d int) parquet.Date { return parquet.MakeDate(y, time.Month(m), d) }

// scanner opens the tables of one data directory as sources of one program.
// The first error is kept and returned by err; scans after it return empty
// data sets, so a query builds its whole program and checks once.
type scanner struct {
	env *dataset.Env
	dir string
	e   error
}

func newScanner(env *dataset.Env, dir string) *scanner {
	s := &scanner{env: env, dir: dir}
	if fi, err := os.Stat(dir); err != nil {
		s.e = fmt.Errorf("data directory: %w", err)
	} else if !fi.IsDir() {
		s.e = fmt.Errorf("data directory %s is not a directory", dir)
	}
	return s
}

func (s *scanner) err() error { return s.e }

// scan returns the rows of table (<dir>/<table>.parquet) as T, reading only
// T's columns and the rows that pass the filters.
func scan[T any](s *scanner, table string, filters ...parquet.Option) *dataset.DataSet[T] {
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

// where is parquet.Where, shorter.
func where(column string, op parquet.Op, values ...any) parquet.Option {
	return parquet.Where(column, op, values...)
}
