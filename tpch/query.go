package tpch

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/tpch/internal/q12to17"
	"github.com/weirdata/weir/tpch/internal/q18to22"
	"github.com/weirdata/weir/tpch/internal/q1to6"
	"github.com/weirdata/weir/tpch/internal/q7to11"
	"github.com/weirdata/weir/tpch/internal/query"
)

// Row is a typed result row: Fields formats it as CSV fields, one per column
// of its query's SELECT, in that order (DECIMAL with its scale, DATE as
// YYYY-MM-DD, NULL as an empty field).
type Row = query.Row

// Rows is a query's typed result. Its values are available once the Env the
// query was built on has executed successfully.
type Rows[T Row] = query.Rows[T]

// Spec is one TPC-H query of the registry.
type Spec struct {
	// N is the query's number, 1..22.
	N int
	// Title is the query's name in the TPC-H specification.
	Title string
	// Columns are the names of the SELECT's columns, in order.
	Columns []string
	build   func(env *dataset.Env, dir string) (func() [][]string, error)
}

// Build adds the query's program to env, reading the tables in dir. The
// returned function formats the result rows once env.Execute has succeeded.
func (s Spec) Build(env *dataset.Env, dir string) (rows func() [][]string, err error) {
	rows, err = s.build(env, dir)
	if err != nil {
		return nil, fmt.Errorf("tpch: q%d: %w", s.N, err)
	}
	return rows, nil
}

// spec adapts a typed query function to the registry.
func spec[T Row](n int, title string, cols []string, q func(*dataset.Env, string) (*Rows[T], error)) Spec {
	return Spec{N: n, Title: title, Columns: cols, build: func(env *dataset.Env, dir string) (func() [][]string, error) {
		r, err := q(env, dir)
		if err != nil {
			return nil, err
		}
		return func() [][]string {
			vals := r.Values()
			out := make([][]string, len(vals))
			for i := range vals {
				out[i] = vals[i].Fields()
			}
			return out
		}, nil
	}}
}

var registry = []Spec{
	spec(1, "Pricing Summary Report", q1to6.Q1Columns, Q1),
	spec(2, "Minimum Cost Supplier", q1to6.Q2Columns, Q2),
	spec(3, "Shipping Priority", q1to6.Q3Columns, Q3),
	spec(4, "Order Priority Checking", q1to6.Q4Columns, Q4),
	spec(5, "Local Supplier Volume", q1to6.Q5Columns, Q5),
	spec(6, "Forecasting Revenue Change", q1to6.Q6Columns, Q6),
	spec(7, "Volume Shipping", q7to11.Q7Columns, Q7),
	spec(8, "National Market Share", q7to11.Q8Columns, Q8),
	spec(9, "Product Type Profit Measure", q7to11.Q9Columns, Q9),
	spec(10, "Returned Item Reporting", q7to11.Q10Columns, Q10),
	spec(11, "Important Stock Identification", q7to11.Q11Columns, Q11),
	spec(12, "Shipping Modes and Order Priority", q12to17.Q12Columns, Q12),
	spec(13, "Customer Distribution", q12to17.Q13Columns, Q13),
	spec(14, "Promotion Effect", q12to17.Q14Columns, Q14),
	spec(15, "Top Supplier", q12to17.Q15Columns, Q15),
	spec(16, "Parts/Supplier Relationship", q12to17.Q16Columns, Q16),
	spec(17, "Small-Quantity-Order Revenue", q12to17.Q17Columns, Q17),
	spec(18, "Large Volume Customer", q18to22.Q18Columns, Q18),
	spec(19, "Discounted Revenue", q18to22.Q19Columns, Q19),
	spec(20, "Potential Part Promotion", q18to22.Q20Columns, Q20),
	spec(21, "Suppliers Who Kept Orders Waiting", q18to22.Q21Columns, Q21),
	spec(22, "Global Sales Opportunity", q18to22.Q22Columns, Q22),
}

// Query returns the Spec of TPC-H query n, and false when weir does not
// implement it.
func Query(n int) (Spec, bool) {
	for _, s := range registry {
		if s.N == n {
			return s, true
		}
	}
	return Spec{}, false
}

// Numbers returns the numbers of the implemented queries, ascending.
func Numbers() []int {
	ns := make([]int, len(registry))
	for i, s := range registry {
		ns[i] = s.N
	}
	return ns
}

// Result is a query's answer as text.
type Result struct {
	// Columns are the SELECT's column names.
	Columns []string
	// Rows are the result rows in ORDER BY order, one field per column.
	Rows [][]string
	// Plan is the plan that ran, with what each operator did.
	Plan *dataset.Plan
	// Spilled is the record bytes the run's exchanges and operators wrote to
	// spill files.
	Spilled int64
	// PeakMemory is the memory manager's peak, in bytes.
	PeakMemory int64
	// Executed is what Env.Execute returned: the plan with what each operator
	// did, the metrics.
	Executed *dataset.Result
}

// Run builds query n on env over the tables in dir, executes it and returns
// its rows. env must be fresh: it runs this one program.
func Run(ctx context.Context, env *dataset.Env, dir string, n int) (Result, error) {
	s, ok := Query(n)
	if !ok {
		return Result{}, fmt.Errorf("tpch: query %d is not implemented (have %v)", n, Numbers())
	}
	rows, err := s.Build(env, dir)
	if err != nil {
		return Result{}, err
	}
	res, err := env.Execute(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("tpch: q%d: %w", n, err)
	}
	out := Result{Columns: slices.Clone(s.Columns), Rows: rows(), Plan: res.Plan, Executed: res}
	if m := res.Metrics; m != nil {
		out.PeakMemory = m.PeakMemory
		for _, v := range m.Vertices {
			out.Spilled += v.Total().Spilled
		}
	}
	return out, nil
}

// WriteCSV writes the result as CSV: a header row of column names, then the
// rows.
func (r Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(r.Columns); err != nil {
		return fmt.Errorf("tpch: write csv: %w", err)
	}
	if err := cw.WriteAll(r.Rows); err != nil {
		return fmt.Errorf("tpch: write csv: %w", err)
	}
	return nil
}
