package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/examples"
)

// newRunCommand is `weir run <example>`: Flink's batch examples as weir DataSet
// programs, one subcommand each (see packages examples and iterate).
func newRunCommand(g *globalOptions) *cobra.Command {
	ex := &explainFlags{}
	cmd := &cobra.Command{
		Use:   "run <example>",
		Short: "Run one of Flink's batch examples: wordcount, weblog, enum-triangles, or an iteration job",
		Long: `Run one of Flink's batch examples (flink-examples-batch) as a weir DataSet program,
on its built-in default data or on files: wordcount, weblog, enum-triangles, and
the iteration jobs pagerank, connected-components, sssp, kmeans, linear-regression
and transitive-closure. Every example writes its result lines sorted, to stdout or
to --output (written under a temporary name and renamed when complete; the
iteration jobs write typed Parquet columns instead when --output ends in
.parquet), and
honours --memory, --tmp and --parallelism. A missing file or a
malformed line stops it with an error naming the file and the line.

--explain prints the example's optimized plan instead and runs nothing (see weir
explain --help for the format).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{err: fmt.Errorf("unknown example %q: want wordcount, weblog, enum-triangles, pagerank, connected-components, sssp, kmeans, linear-regression or transitive-closure", args[0])}
			}
			return cmd.Help()
		},
	}
	ex.register(cmd.PersistentFlags())
	cmd.AddCommand(newWordCountCommand(g, ex), newWebLogCommand(g, ex), newTrianglesCommand(g, ex))
	cmd.AddCommand(iterationCommands(g, ex)...)
	return cmd
}

// runExample validates the global flags and runs job with the examples.Options
// they and --output make. The examples' errors name the example. With
// --explain, the example's program is planned and its plan printed instead of
// running it: the examples build and execute their Env themselves, so
// dataset.Options.Planned keeps the plan Execute is about to run and stops it.
func runExample(cmd *cobra.Command, g *globalOptions, ex *explainFlags, output string,
	job func(ctx context.Context, o examples.Options) error) error {
	if err := g.validate(); err != nil {
		return err
	}
	if err := ex.validate(); err != nil {
		return err
	}
	opts, progressDone := g.datasetOptions(cmd, "run "+cmd.Name())
	defer progressDone()
	var planned *dataset.Plan
	if ex.plan {
		opts.Planned = func(p *dataset.Plan) error {
			planned = p
			return errPlanned
		}
	}
	o := examples.Options{
		Dataset: opts,
		Output:  output,
		Stdout:  cmd.OutOrStdout(),
	}
	var analyzed *dataset.Result
	if ex.analyze {
		o.Executed = func(res *dataset.Result) { analyzed = res }
	}
	stopProfile, err := g.startProfile()
	if err != nil {
		return err
	}
	err = job(cmd.Context(), o)
	if perr := stopProfile(); err == nil && perr != nil {
		err = perr
	}
	if planned != nil && errors.Is(err, errPlanned) {
		return writePlan(cmd.OutOrStdout(), planned, ex.format)
	}
	if err == nil && analyzed != nil && analyzed.Plan != nil {
		return writePlan(cmd.ErrOrStderr(), analyzed.Plan, ex.format)
	}
	return err
}

func newWordCountCommand(g *globalOptions, ex *explainFlags) *cobra.Command {
	var input, output string
	cmd := &cobra.Command{
		Use:   "wordcount [--input FILE] [--output FILE]",
		Short: "Count the words of a text (Flink's WordCount)",
		Long: `Count the words of --input (a text file, a directory of them or a glob; default:
Flink's WordCountData, a passage of Hamlet) as Flink's WordCount does: lowercase each
line, split it on runs of characters other than ASCII letters, digits and '_' (Java's
\W+) and drop empty tokens. Prints "word count" lines sorted by word (bytewise), so
the output is the same at any parallelism.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			return runExample(cmd, g, ex, output, func(ctx context.Context, o examples.Options) error {
				return examples.RunWordCount(ctx, o, input)
			})
		}),
	}
	cmd.Flags().StringVar(&input, "input", "", "text to count the words of (default: Flink's WordCountData)")
	cmd.Flags().StringVar(&output, "output", "", "file to write the counts to (default: stdout)")
	return cmd
}

func newWebLogCommand(g *globalOptions, ex *explainFlags) *cobra.Command {
	var in examples.WebLogInputs
	var output string
	cmd := &cobra.Command{
		Use:   "weblog [--documents FILE] [--ranks FILE] [--visits FILE] [--output FILE]",
		Short: "Find well-ranked documents with keywords not visited in 2007 (Flink's WebLogAnalysis)",
		Long: `Run Flink's WebLogAnalysis: the documents whose text contains " editors " and
" oscillations ", joined with their ranks where rank > 40, without the URLs
visited in 2007 (an anti join). The inputs use Flink's '|'-separated formats,
each defaulting to Flink's WebLogData:

  --documents  url|text|
  --ranks      rank|url|avg_duration|
  --visits     ip|url|date|... (nine fields; url and date YYYY-MM-DD are read)

Prints "rank|url|avg_duration" lines (Flink's CSV output) sorted by rank, then url.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			return runExample(cmd, g, ex, output, func(ctx context.Context, o examples.Options) error {
				return examples.RunWebLog(ctx, o, in)
			})
		}),
	}
	f := cmd.Flags()
	f.StringVar(&in.Documents, "documents", "", "documents relation (default: Flink's WebLogData)")
	f.StringVar(&in.Ranks, "ranks", "", "ranks relation (default: Flink's WebLogData)")
	f.StringVar(&in.Visits, "visits", "", "visits relation (default: Flink's WebLogData)")
	f.StringVar(&output, "output", "", "file to write the result to (default: stdout)")
	return cmd
}

func newTrianglesCommand(g *globalOptions, ex *explainFlags) *cobra.Command {
	var edges, output string
	cmd := &cobra.Command{
		Use:   "enum-triangles [--edges FILE] [--output FILE]",
		Short: "Enumerate the triangles of a graph (Flink's EnumTriangles)",
		Long: `Enumerate the triangles of the undirected graph in --edges ("a b" lines of
integer vertex ids; default: Flink's EnumTrianglesData) as Flink's optimized
EnumTriangles does: annotate edges with their vertices' degrees, build triads on
the vertex of smaller degree and keep those a third edge closes. Self-loops and
duplicate edges are ignored. Prints "a b c" lines, a < b < c, sorted.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			return runExample(cmd, g, ex, output, func(ctx context.Context, o examples.Options) error {
				return examples.RunTriangles(ctx, o, edges)
			})
		}),
	}
	cmd.Flags().StringVar(&edges, "edges", "", "edges of the graph (default: Flink's EnumTrianglesData)")
	cmd.Flags().StringVar(&output, "output", "", "file to write the triangles to (default: stdout)")
	return cmd
}
