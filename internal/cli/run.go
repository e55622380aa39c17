package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples"
)

// newRunCommand is `weir run <example>`: Flink's batch examples as weir DataSet
// programs (packages examples and iterate) and its streaming examples as
// DataStream programs (package examples/streaming), one subcommand each.
func newRunCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run <example>",
		Short: "Run one of Flink's examples: wordcount, weblog, enum-triangles, an iteration job, or a stream job",
		Long: `Run one of Flink's examples as a weir program, batch or stream.

The batch examples (flink-examples-batch) run as DataSet programs,
on their built-in default data or on files: wordcount, weblog, enum-triangles, and
the iteration jobs pagerank, connected-components, sssp, kmeans, linear-regression
and transitive-closure. Every example writes its result lines sorted, to stdout or
to --output (written under a temporary name and renamed when complete; the
iteration jobs write typed Parquet columns instead when --output ends in
.parquet), and
honours --memory, --tmp and --parallelism. A missing file or a
malformed line stops it with an error naming the file and the line.

weir explain <example> with the same flags prints the example's plan (see weir
explain --help).

The stream jobs streaming-wordcount, state-machine, iterate, session-windowing,
top-speed-windowing, window-wordcount, window-join, side-output and
socket-window-wordcount run Flink's streaming examples (flink-examples-streaming) as DataStream programs and print
in Flink's print-sink format; an unbounded one runs until Ctrl-C, which exits with
status 130. window-stats aggregates a CSV of events per key and event-time window.
Every stream job takes the checkpoint, state backend and savepoint flags (see
weir run <job> --help), the iteration included.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{err: fmt.Errorf("unknown example %q: want %s", args[0], runJobNames())}
			}
			return cmd.Help()
		},
	}
	for _, j := range runJobs() {
		cmd.AddCommand(j.command(g))
	}
	for _, j := range streamJobs() {
		cmd.AddCommand(j.command(g))
	}
	return cmd
}

func wordCountJob() *job {
	return &job{
		name:  "wordcount",
		args:  "[--input FILE] [--output FILE]",
		short: "Count the words of a text (Flink's WordCount)",
		long: `Count the words of --input (a text file, a directory of them or a glob; default:
Flink's WordCountData, a passage of Hamlet) as Flink's WordCount does: lowercase each
line, split it on runs of characters other than ASCII letters, digits and '_' (Java's
\W+) and drop empty tokens. Prints "word count" lines sorted by word (bytewise), so
the output is the same at any parallelism.`,
		bind: func(f *pflag.FlagSet) program {
			var input string
			f.StringVar(&input, "input", "", "text to count the words of (default: Flink's WordCountData)")
			output := outputFlag(f, "file to write the counts to (default: stdout)")
			return func(ctx context.Context, o examples.Options) error {
				o.Output = *output
				return examples.RunWordCount(ctx, o, input)
			}
		},
	}
}

func webLogJob() *job {
	return &job{
		name:  "weblog",
		args:  "[--documents FILE] [--ranks FILE] [--visits FILE] [--output FILE]",
		short: "Find well-ranked documents with keywords not visited in 2007 (Flink's WebLogAnalysis)",
		long: `Run Flink's WebLogAnalysis: the documents whose text contains " editors " and
" oscillations ", joined with their ranks where rank > 40, without the URLs
visited in 2007 (an anti join). The inputs use Flink's '|'-separated formats,
each defaulting to Flink's WebLogData:

  --documents  url|text|
  --ranks      rank|url|avg_duration|
  --visits     ip|url|date|... (nine fields; url and date YYYY-MM-DD are read)

Prints "rank|url|avg_duration" lines (Flink's CSV output) sorted by rank, then url.`,
		bind: func(f *pflag.FlagSet) program {
			var in examples.WebLogInputs
			f.StringVar(&in.Documents, "documents", "", "documents relation (default: Flink's WebLogData)")
			f.StringVar(&in.Ranks, "ranks", "", "ranks relation (default: Flink's WebLogData)")
			f.StringVar(&in.Visits, "visits", "", "visits relation (default: Flink's WebLogData)")
			output := outputFlag(f, "file to write the result to (default: stdout)")
			return func(ctx context.Context, o examples.Options) error {
				o.Output = *output
				return examples.RunWebLog(ctx, o, in)
			}
		},
	}
}

func trianglesJob() *job {
	return &job{
		name:  "enum-triangles",
		args:  "[--edges FILE] [--output FILE]",
		short: "Enumerate the triangles of a graph (Flink's EnumTriangles)",
		long: `Enumerate the triangles of the undirected graph in --edges ("a b" lines of
integer vertex ids; default: Flink's EnumTrianglesData) as Flink's optimized
EnumTriangles does: annotate edges with their vertices' degrees, build triads on
the vertex of smaller degree and keep those a third edge closes. Self-loops and
duplicate edges are ignored. Prints "a b c" lines, a < b < c, sorted.`,
		bind: func(f *pflag.FlagSet) program {
			var edges string
			f.StringVar(&edges, "edges", "", "edges of the graph (default: Flink's EnumTrianglesData)")
			output := outputFlag(f, "file to write the triangles to (default: stdout)")
			return func(ctx context.Context, o examples.Options) error {
				o.Output = *output
				return examples.RunTriangles(ctx, o, edges)
			}
		},
	}
}

// outputFlag registers --output on f.
func outputFlag(f *pflag.FlagSet, usage string) *string {
	return f.String("output", "", usage)
}
