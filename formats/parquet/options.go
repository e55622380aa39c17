package parquet

import "fmt"

// Op is a comparison of a declared filter.
type Op int

// The filter operations. Eq, Lt, Le, Gt and Ge take one value, Between two
// (inclusive bounds), In one or more.
const (
	Eq Op = iota + 1
	Lt
	Le
	Gt
	Ge
	Between
	In
)

// String names the operation.
func (o Op) String() string {
	switch o {
	case Eq:
		return "="
	case Lt:
		return "<"
	case Le:
		return "<="
	case Gt:
		return ">"
	case Ge:
		return ">="
	case Between:
		return "BETWEEN"
	case In:
		return "IN"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// DefaultBatchRows is how many rows Read decodes per batch.
const DefaultBatchRows = 4096

// Option configures Open.
type Option func(*options)

type options struct {
	filters    []filterSpec
	pairs      []pairSpec
	nullAsZero bool
	batchRows  int
}

// filterSpec is a filter as declared, before it is compiled against a file.
type filterSpec struct {
	column string
	op     Op
	values []any
}

// Where declares a filter: only rows whose column satisfies op against values
// are passed to Read's callback, and row groups whose statistics prove that no
// row can satisfy it are left out of Splits. Several Where options must all
// hold. The column need not be a field of T. NULL never satisfies a filter.
//
// values are Go values comparable with the column: integers, float64,
// Decimal, string or []byte, bool, Date or time.Time (for DATE and TIMESTAMP
// columns). A DECIMAL column compares exactly (Where("l_discount", Between,
// 0.05, 0.07) keeps 0.05 and 0.07). Mismatches are reported by Open.
func Where(column string, op Op, values ...any) Option {
	return func(o *options) {
		o.filters = append(o.filters, filterSpec{column: column, op: op, values: values})
	}
}

// NullAsZero makes a NULL read into a non-pointer field its zero value instead
// of an error.
func NullAsZero() Option { return func(o *options) { o.nullAsZero = true } }

// BatchRows sets how many rows Read decodes per batch (default
// DefaultBatchRows); n < 1 is treated as 1.
func BatchRows(n int) Option {
	return func(o *options) { o.batchRows = max(n, 1) }
}
