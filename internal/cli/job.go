package cli

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/examples"
)

// job is one DataSet program the command line runs (weir run <job>, weir
// tpch) and explains (weir explain <job>). Its flags are defined once, in
// bind, and both doors use them.
type job struct {
	name  string // the subcommand: "wordcount"
	args  string // the job's flags in the usage line: "[--input FILE] [--output FILE]"
	short string
	long  string
	// iterative jobs print their supersteps to stderr after a run.
	iterative bool
	// bind registers the job's flags on f and returns the program over their
	// values. The program checks the values first (a bad value is a
	// *usageError), then builds its Env from o.Dataset and runs it: it writes
	// its result to o.Output or o.Stdout and hands the Env's result to
	// o.Executed. The run stops before anything runs when o.Dataset.Planned
	// returns an error.
	bind func(f *pflag.FlagSet) program
}

// program runs one job with the values of its flags.
type program func(ctx context.Context, o examples.Options) error

// runJobs returns the jobs of weir run, in the order help lists them.
func runJobs() []*job {
	return []*job{wordCountJob(), webLogJob(), trianglesJob(), pageRankJob(), componentsJob(),
		shortestPathsJob(), kMeansJob(), regressionJob(), closureJob()}
}

// command returns the cobra command of j under `weir run` (or as `weir tpch`).
func (j *job) command(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   j.name + " " + j.args,
		Short: j.short,
		Long:  j.long,
		Args:  cobra.NoArgs,
	}
	run := j.bind(cmd.Flags())
	g.registerProgram(cmd.Flags())
	var sub submitFlags
	sub.register(cmd.Flags())
	cmd.RunE = runE(func(cmd *cobra.Command) error {
		if err := g.validate(); err != nil {
			return err
		}
		if sub.jobmanager != "" {
			return sub.submit(cmd)
		}
		opts, progressDone := g.datasetOptions(cmd, cmd.CommandPath()[len("weir "):])
		defer progressDone()
		o := examples.Options{Dataset: opts, Stdout: cmd.OutOrStdout()}
		if j.iterative {
			o.Executed = func(res *dataset.Result) { printSupersteps(cmd.ErrOrStderr(), res) }
		}
		return g.profile(func() error { return run(cmd.Context(), o) })
	})
	return cmd
}

// explainCommand returns the cobra command of j under `weir explain`: the
// job's own flags and --format and --analyze. Without --analyze the job is
// planned and its plan printed: Env.Execute hands the plan to
// dataset.Options.Planned and stops there. With --analyze the job runs, its
// result lines are dropped (a file named by --output is written) and the plan
// with what each operator did is printed. The plan goes to stdout in either
// case.
func (j *job) explainCommand(g *globalOptions) *cobra.Command {
	var e explainFlags
	cmd := &cobra.Command{
		Use:   j.name + " " + j.args + " [--format text|json|dot] [--analyze]",
		Short: "Print the plan of " + j.name + ": " + j.short,
		Long: `Print the plan the optimizer chooses for weir ` + j.path() + ` with the same flags,
without running it. With --analyze, run it (its result lines are not printed)
and print the plan with what each operator did. See weir explain --help for the
formats and weir ` + j.path() + ` --help for the job:

` + j.long,
		Args: cobra.NoArgs,
	}
	run := j.bind(cmd.Flags())
	g.registerProgram(cmd.Flags())
	e.register(cmd.Flags())
	cmd.RunE = runE(func(cmd *cobra.Command) error {
		if err := g.validate(); err != nil {
			return err
		}
		if err := checkPlanFormat("format", e.format); err != nil {
			return err
		}
		opts, progressDone := g.datasetOptions(cmd, cmd.CommandPath()[len("weir "):])
		defer progressDone()
		var plan *dataset.Plan
		if !e.analyze {
			opts.Planned = func(p *dataset.Plan) error {
				plan = p
				return errPlanned
			}
		}
		o := examples.Options{Dataset: opts, Stdout: io.Discard}
		if e.analyze {
			o.Executed = func(res *dataset.Result) { plan = res.Plan }
		}
		err := g.profile(func() error { return run(cmd.Context(), o) })
		if err != nil && !(errors.Is(err, errPlanned) && plan != nil) {
			return err
		}
		return writePlan(cmd.OutOrStdout(), plan, e.format)
	})
	return cmd
}

// path is the command that runs j: "run wordcount", or "tpch".
func (j *job) path() string {
	if j.name == "tpch" {
		return j.name
	}
	return "run " + j.name
}

// errPlanned ends a job that was only to be planned: dataset.Options.Planned
// keeps the plan and returns it, so that Env.Execute returns before running
// anything.
var errPlanned = errors.New("cli: planned, not run")
