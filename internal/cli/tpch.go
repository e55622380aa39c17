package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/tpch"
)

// tpchOptions are the flags of `weir tpch`.
type tpchOptions struct {
	data  string
	query int
}

// check validates the global flags, --query and --data.
func (o *tpchOptions) check(g *globalOptions) error {
	if err := g.validate(); err != nil {
		return err
	}
	if _, ok := tpch.Query(o.query); !ok {
		return &usageError{err: fmt.Errorf("--query %d: not implemented (have %s)", o.query, queryList())}
	}
	fi, err := os.Stat(o.data)
	if err != nil {
		return fmt.Errorf("tpch: --data: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("tpch: --data %s: not a directory", o.data)
	}
	return nil
}

func newTPCHCommand(g *globalOptions) *cobra.Command {
	o := &tpchOptions{}
	ex := &explainFlags{}
	cmd := &cobra.Command{
		Use:   "tpch --data DIR --query N",
		Short: "Run a TPC-H query over Parquet tables and print its result as CSV",
		Long: `Run TPC-H query N as a weir DataSet program over the TPC-H tables stored as
Parquet files in DIR (customer.parquet, lineitem.parquet, nation.parquet,
orders.parquet, part.parquet, region.parquet, supplier.parquet, ...), within
--memory, with --parallelism instances of every operator, spilling to --tmp.
The result is printed as CSV: a header row of the query's column names, then the
rows in the query's ORDER BY order. Queries: ` + queryList() + `.

--explain prints the optimized plan instead and runs nothing; --explain-analyze
runs the query, prints its result as usual and then the plan, with what each
operator did, to stderr (see weir explain --help for the formats). --adaptive
runs the inputs of the joins first and plans what reads them again with their
real sizes; --explain-analyze then shows the operators it re-planned.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			if err := o.check(g); err != nil {
				return err
			}
			if err := ex.validate(); err != nil {
				return err
			}
			switch {
			case ex.plan:
				opts, done := g.datasetOptions(cmd, "tpch")
				defer done()
				p, err := planTPCH(dataset.New(opts), o)
				if err != nil {
					return err
				}
				return writePlan(cmd.OutOrStdout(), p, ex.format)
			case ex.analyze:
				res, rows, err := executeTPCH(cmd, g, o, "tpch")
				if err != nil {
					return err
				}
				if err := rows.WriteCSV(cmd.OutOrStdout()); err != nil {
					return err
				}
				return writePlan(cmd.ErrOrStderr(), res.Plan, ex.format)
			}
			stopProfile, err := g.startProfile()
			if err != nil {
				return err
			}
			opts, progressDone := g.datasetOptions(cmd, fmt.Sprintf("tpch q%d", o.query))
			env := dataset.New(opts)
			res, err := tpch.Run(cmd.Context(), env, o.data, o.query)
			progressDone()
			if perr := stopProfile(); err == nil && perr != nil {
				err = perr
			}
			if err != nil {
				return err // "tpch: qN: ..." names the file where there is one
			}
			return res.WriteCSV(cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "", "directory of the TPC-H tables as <table>.parquet (required)")
	f.IntVar(&o.query, "query", 0, "number of the TPC-H query to run (required): "+queryList())
	ex.register(f)
	g.registerAdaptive(f)
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("query")
	return cmd
}

// queryList lists the implemented queries: "1, 3, 5, ...".
func queryList() string {
	ns := tpch.Numbers()
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
