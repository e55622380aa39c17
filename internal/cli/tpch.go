package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/examples"
	"github.com/weirdata/weir/tpch"
)

// tpchJob is `weir tpch`: a TPC-H query over Parquet tables, its rows printed
// as CSV.
func tpchJob() *job {
	return &job{
		name:  "tpch",
		args:  "--data DIR --query N",
		short: "Run a TPC-H query over Parquet tables and print its result as CSV",
		long: `Run TPC-H query N as a weir DataSet program over the TPC-H tables stored as
Parquet files in DIR (customer.parquet, lineitem.parquet, nation.parquet,
orders.parquet, part.parquet, region.parquet, supplier.parquet, ...), within
--memory, with --parallelism instances of every operator, spilling to --tmp.
The result is printed as CSV: a header row of the query's column names, then the
rows in the query's ORDER BY order. Queries: ` + queryList() + `.

--adaptive runs the inputs of the joins first and plans what reads them again
with their real sizes; weir explain tpch --analyze then shows the operators it
re-planned. Without --analyze, weir explain prints the first planning.`,
		bind: func(f *pflag.FlagSet) program {
			var data string
			var query int
			f.StringVar(&data, "data", "", "directory of the TPC-H tables as <table>.parquet (required)")
			f.IntVar(&query, "query", 0, "number of the TPC-H query (required): "+queryList())
			_ = cobra.MarkFlagRequired(f, "data")
			_ = cobra.MarkFlagRequired(f, "query")
			return func(ctx context.Context, o examples.Options) error {
				if err := checkTPCH(data, query); err != nil {
					return err
				}
				res, err := tpch.Run(ctx, dataset.New(o.Dataset), data, query)
				if err != nil {
					return err // "tpch: qN: ..." names the file where there is one
				}
				if o.Executed != nil {
					o.Executed(res.Executed)
				}
				return res.WriteCSV(o.Stdout)
			}
		},
	}
}

// checkTPCH validates --query and --data.
func checkTPCH(data string, query int) error {
	if _, ok := tpch.Query(query); !ok {
		return &usageError{err: fmt.Errorf("--query %d: not implemented (have %s)", query, queryList())}
	}
	fi, err := os.Stat(data)
	if err != nil {
		return fmt.Errorf("tpch: --data: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("tpch: --data %s: not a directory", data)
	}
	return nil
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
