package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/examples/linesort"
	"github.com/weirdata/weir/memory"
)

// runSort runs a sort under the runtime memory limit of its budget, drawing a
// progress line on progress (nil: none).
func runSort(ctx context.Context, job *linesort.Job, budget int64, progress io.Writer) (linesort.Summary, error) {
	defer memory.LimitRuntime(budget)() // kept if the command set it already
	stop := startSortProgress(progress, job)
	defer stop()
	return job.Run(ctx)
}

// sortOptions are the flags of `weir sort`.
type sortOptions struct {
	input, output string
	codec         string
}

func newSortCommand(g *globalOptions) *cobra.Command {
	o := &sortOptions{}
	cmd := &cobra.Command{
		Use:   "sort --input FILE --output FILE",
		Short: "Sort the lines of a text file bytewise, as LC_ALL=C sort does",
		Long: `Sort the lines of a text file of any size bytewise, exactly as LC_ALL=C sort does:
a last line without a newline gets one, and empty lines, carriage returns, NUL bytes
and invalid UTF-8 are just bytes. The sort stays within --memory, spilling sorted
runs to --tmp, and runs --parallelism sorters at once on key ranges of the input.
The output is written next to --output under a temporary name and renamed when
complete; on error or interrupt no output and no spill file remain.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			if err := g.validate(); err != nil {
				return err
			}
			codec, err := parseCodec(o.codec)
			if err != nil {
				return err
			}
			job := linesort.New(linesort.Options{
				Input:  o.input,
				Output: o.output,
				Dataset: dataset.Options{Parallelism: g.workers(), Memory: g.managed(), TmpDir: g.tmp,
					Spill: dataset.SpillOptions{Codec: codec}},
			})
			var progress io.Writer
			if g.progress && isTerminal(cmd.ErrOrStderr()) {
				progress = cmd.ErrOrStderr()
			}
			return g.profile(func() error {
				_, err := runSort(cmd.Context(), job, g.managed(), progress)
				return err
			})
		}),
	}
	f := cmd.Flags()
	g.registerJob(f)
	f.StringVar(&o.input, "input", "", "file whose lines to sort (required)")
	f.StringVar(&o.output, "output", "", "file to write the sorted lines to (required)")
	f.StringVar(&o.codec, "spill-codec", "none", "compression of spill files: none, s2 or zstd")
	_ = f.MarkHidden("spill-codec")
	_ = cmd.MarkFlagRequired("input")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

func parseCodec(s string) (dataset.SpillCodec, error) {
	switch s {
	case "none":
		return dataset.SpillNone, nil
	case "s2":
		return dataset.SpillS2, nil
	case "zstd":
		return dataset.SpillZstd, nil
	}
	return 0, &usageError{err: fmt.Errorf("--spill-codec %q: want none, s2 or zstd", s)}
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && f.Name() != os.DevNull
}
