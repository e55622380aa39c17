package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/tpch/dbgen"
)

// newGenTPCHCommand is `weir gen tpch`, which writes the eight TPC-H tables
// as DuckDB's dbgen makes them.
func newGenTPCHCommand() *cobra.Command {
	var (
		sf          string
		out         string
		parallelism int
		tables      string
	)
	cmd := &cobra.Command{
		Use:   "tpch --sf X --out DIR [--parallelism P] [--tables lineitem,orders]",
		Short: "Write the TPC-H tables as Parquet files, row for row as dbgen makes them",
		Long: `Write the TPC-H tables at scale factor X as DIR/<table>.parquet: the rows of
TPC's dbgen as DuckDB embeds it (CALL dbgen(sf=X)), with DuckDB's column types
(BIGINT keys, INTEGER nation, region, size and ship priority, DECIMAL(15,2) as
INT64, DATE as INT32, strings as UTF-8), Snappy-compressed, 122,880 rows per
row group.

A scale factor below 1 scales every table's row count by int(1000·X)/1000, as
dbgen does; from 1 on it is truncated to an integer. SF 1 is 6 million
lineitems. --parallelism goroutines generate disjoint ranges of rows; the
files are the same whatever it is. Each file is written under a temporary
name; only when all tables are complete are they renamed, so a failed run
leaves no file behind.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			scale, err := strconv.ParseFloat(sf, 64)
			if err != nil {
				return &usageError{err: fmt.Errorf("--sf %q: not a number", sf)}
			}
			if _, err := dbgen.NewScale(scale); err != nil {
				return &usageError{err: fmt.Errorf("--sf %s: %w", sf, err)}
			}
			if parallelism < 0 {
				return &usageError{err: fmt.Errorf("--parallelism %d: want a positive number (0: all cores)", parallelism)}
			}
			var list []string
			if tables != "" {
				for _, t := range strings.Split(tables, ",") {
					t = strings.TrimSpace(strings.ToLower(t))
					if !slices.Contains(dbgen.TableNames, t) {
						return &usageError{err: fmt.Errorf("--tables: unknown table %q (want some of %s)", t, strings.Join(dbgen.TableNames, ","))}
					}
					list = append(list, t)
				}
			}
			opts := dbgen.Options{Scale: scale, Dir: out, Parallelism: parallelism, Tables: list}
			stop := startGenProgress(cmd, &opts)
			err = dbgen.Generate(cmd.Context(), opts)
			stop()
			if err != nil {
				return fmt.Errorf("gen tpch: %w", err)
			}
			return nil
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&sf, "sf", "", "scale factor, e.g. 0.01, 1, 10 (required)")
	fl.StringVar(&out, "out", "", "directory to write the files into, created if missing (required)")
	fl.IntVar(&parallelism, "parallelism", 0, "goroutines generating rows (0: all cores)")
	fl.StringVar(&tables, "tables", "", "comma-separated tables to write (default: all eight)")
	_ = cmd.MarkFlagRequired("sf")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// startGenProgress sets opts.Progress to draw a progress line on stderr when
// it is a terminal (at most every progressEvery); the returned function ends
// the line.
func startGenProgress(cmd *cobra.Command, opts *dbgen.Options) (stop func()) {
	w := cmd.ErrOrStderr()
	if !isTerminal(w) {
		return func() {}
	}
	var (
		mu    sync.Mutex
		last  time.Time
		drawn bool
	)
	start := time.Now()
	opts.Progress = func(table string, rows int64) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(last) < progressEvery {
			return
		}
		last = time.Now()
		drawn = true
		if rows < 0 {
			fmt.Fprintf(w, "\rweir gen tpch: %.1fs, %s\033[K", time.Since(start).Seconds(), table)
			return
		}
		fmt.Fprintf(w, "\rweir gen tpch: %.1fs, %s: %d rows\033[K", time.Since(start).Seconds(), table, rows)
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if drawn {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}
