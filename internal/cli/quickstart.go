package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/examples/linesort"
	"github.com/weirdata/weir/memory"
)

// quickstartMemory is the budget of `weir quickstart` without --memory: small
// enough that the sort spills runs and merges them.
const quickstartMemory = 16 << 20

// newQuickstartCommand is `weir quickstart`: on a fresh clone with no data, it
// writes sample tables as Parquet and runs a multi-stage DataSet job over them
// (a join, a grouped aggregation, a sort), then makes a file of random lines and
// sorts it with `weir sort` under a budget that forces spilling; it checks both
// results independently and prints them with the job's plan and metrics.
func newQuickstartCommand(g *globalOptions) *cobra.Command {
	size := Size(32 << 20)
	var keep string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "quickstart",
		Short: "Make sample data, run jobs on it, check and print the results",
		Long: `Make sample data in a temporary directory and run two jobs on it:

1. A DataSet program over two Parquet tables (100,000 orders, 2,000 customers):
   join orders to customers, sum revenue and count orders per country, sort by
   revenue. It prints the result, checked against a naive computation, the plan
   the planner chose and what every task did.
2. weir sort on --size bytes of random 100-byte lines under a memory budget
   (default 16MiB, so the sort spills sorted runs and merges them); it checks the
   output's order and lines and prints what the sort did.

--keep DIR keeps the files.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			if !cmd.Flags().Changed("memory") {
				g.memory = quickstartMemory
			}
			if err := g.validate(); err != nil {
				return err
			}
			if size <= 0 {
				return &usageError{err: fmt.Errorf("--size must be positive")}
			}
			return runQuickstart(cmd, g, int64(size), seed, keep)
		}),
	}
	g.registerJob(cmd.Flags())
	cmd.Flags().Var(&size, "size", "bytes of sample lines to make and sort")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed of the sample data")
	cmd.Flags().StringVar(&keep, "keep", "", "directory to keep the input and output files in (default: a temporary one, removed)")
	return cmd
}

func runQuickstart(cmd *cobra.Command, g *globalOptions, size int64, seed uint64, keep string) (err error) {
	out := cmd.OutOrStdout()
	dir := keep
	if dir == "" {
		if dir, err = os.MkdirTemp(g.tmp, "weir-quickstart-*"); err != nil {
			return fmt.Errorf("quickstart: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("quickstart: %w", err)
	}
	opts, progressDone := g.datasetOptions(cmd, "quickstart")
	err = runQuickstartJob(cmd.Context(), out, opts, dir)
	progressDone()
	if err != nil {
		return fmt.Errorf("quickstart: %w", err)
	}
	fmt.Fprintln(out)

	input := filepath.Join(dir, "lines.txt")
	output := filepath.Join(dir, "sorted.txt")

	if err := writeAtomically(input, func(w io.Writer) error { return WriteRandomLines(w, size, seed) }); err != nil {
		return fmt.Errorf("quickstart: %w", err)
	}
	job := linesort.New(linesort.Options{
		Input:   input,
		Output:  output,
		Dataset: dataset.Options{Parallelism: g.workers(), Memory: g.managed(), TmpDir: g.tmp},
	})
	fmt.Fprintf(out, "weir quickstart: sort %s of random 100-byte lines with --memory %s and --parallelism %d\n",
		humanBytes(size), humanBytes(int64(g.memory)), g.workers())
	start := time.Now()
	s, err := runSort(cmd.Context(), job, g.managed(), nil)
	if err != nil {
		return fmt.Errorf("quickstart: sort: %w", err)
	}
	elapsed := time.Since(start)
	fmt.Fprintf(out, "  sorted   %d lines, %s in %.2fs (%.0f MB/s) over %d key ranges\n",
		s.Lines, humanBytes(s.Bytes), elapsed.Seconds(), float64(s.Bytes)/1e6/elapsed.Seconds(), s.Ranges)
	fmt.Fprintf(out, "  spilled  %s of sorted runs to disk\n", humanBytes(s.SpilledBytes))
	fmt.Fprintf(out, "  memory   peak %s reserved of the operators' %s (--memory %s)\n",
		humanBytes(s.PeakMemory), humanBytes(g.managed()), humanBytes(int64(g.memory)))

	inSum, err := lineChecksum(input, false)
	if err != nil {
		return fmt.Errorf("quickstart: check: %w", err)
	}
	outSum, err := lineChecksum(output, true)
	if err != nil {
		return fmt.Errorf("quickstart: check: %w", err)
	}
	if inSum != outSum || outSum.lines != s.Lines {
		return fmt.Errorf("quickstart: check: output %s holds %d lines (checksum %x), input %s holds %d (checksum %x)",
			output, outSum.lines, outSum.sum, input, inSum.lines, inSum.sum)
	}
	fmt.Fprintf(out, "  checked  the output is in LC_ALL=C order and holds exactly the input's %d lines\n", outSum.lines)
	if keep != "" {
		fmt.Fprintf(out, "  files    %s, %s\n", input, output)
	}
	fmt.Fprintf(out, "next: weir sort --input FILE --output FILE [--memory 256MiB] [--tmp DIR]; weir gen lines --out FILE --size 2GB\n")
	return nil
}

// checksum is an order-independent digest of a file's lines: their number and the
// sum of their hashes.
type checksum struct {
	lines int64
	sum   uint64
}

// lineChecksum reads path's lines; with sorted, it also checks that they are in
// bytewise order and names the first line that is not.
func lineChecksum(path string, sorted bool) (checksum, error) {
	f, err := os.Open(path)
	if err != nil {
		return checksum{}, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var c checksum
	var prev []byte
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return c, fmt.Errorf("%s: line %d is longer than 1 MiB", path, c.lines+1)
		}
		if len(line) > 0 {
			line = bytes.TrimSuffix(line, []byte{'\n'})
			c.lines++
			c.sum += memory.Hash(line, 0x9e3779b97f4a7c15)
			if sorted {
				if prev != nil && bytes.Compare(prev, line) > 0 {
					return c, fmt.Errorf("%s: line %d is out of order", path, c.lines)
				}
				prev = append(prev[:0], line...)
			}
		}
		if err == io.EOF {
			return c, nil
		}
		if err != nil {
			return c, err
		}
	}
}
