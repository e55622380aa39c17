package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/tpch"
)

// Plan formats of --format (weir explain) and --explain-format.
const (
	formatText = "text"
	formatJSON = "json"
	formatDOT  = "dot"
)

// checkPlanFormat returns a usage error unless format is one of the plan formats.
func checkPlanFormat(flag, format string) error {
	switch format {
	case formatText, formatJSON, formatDOT:
		return nil
	}
	return &usageError{err: fmt.Errorf("--%s %q: want text, json or dot", flag, format)}
}

// writePlan writes p in format: optimizer's Text, JSON or DOT, exactly as the
// optimizer's golden files hold them.
func writePlan(w io.Writer, p *dataset.Plan, format string) error {
	var out []byte
	switch format {
	case formatJSON:
		b, err := p.JSON()
		if err != nil {
			return err
		}
		out = b
	case formatDOT:
		out = []byte(p.DOT())
	default:
		out = []byte(p.Text())
	}
	_, err := w.Write(out)
	return err
}

// explainFlags are --explain, --explain-analyze and --explain-format of the job
// commands that run DataSet programs (weir tpch, weir run <example>).
type explainFlags struct {
	plan    bool   // --explain: print the plan, do not run
	analyze bool   // --explain-analyze: run, then print the plan with actuals to stderr
	format  string // --explain-format
}

func (e *explainFlags) register(f interface {
	BoolVar(p *bool, name string, value bool, usage string)
	StringVar(p *string, name string, value string, usage string)
}) {
	f.BoolVar(&e.plan, "explain", false, "print the optimized plan and do not run the job")
	f.BoolVar(&e.analyze, "explain-analyze", false,
		"run the job, print its output as usual and the plan with what each operator did to stderr")
	f.StringVar(&e.format, "explain-format", formatText, "format of the plan: text, json or dot")
}

func (e *explainFlags) validate() error {
	if e.plan && e.analyze {
		return &usageError{err: errors.New("--explain and --explain-analyze exclude each other")}
	}
	return checkPlanFormat("explain-format", e.format)
}

// errPlanned ends a job that was only to be planned: dataset.Options.Planned
// keeps the plan and returns it, so that Env.Execute returns before running
// anything.
var errPlanned = errors.New("cli: planned, not run")

// explainTPCHOptions are the flags of `weir explain tpch`.
type explainTPCHOptions struct {
	tpchOptions
	format  string
	analyze bool
}

// newExplainCommand is `weir explain`, with one subcommand per kind of program.
func newExplainCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain <program>",
		Short: "Print the optimized plan of a program, or run it and print what each operator did",
		Long: `Print the plan the optimizer chooses for a program, without running it: every
operator with its parallelism, driver strategy, estimates and costs, and how each
of its inputs is shipped, pre-sorted and exchanged. With --analyze the program
runs (its result is not printed) and the plan shows what each operator did:
records emitted, busy time, peak managed memory and bytes spilled.

Formats: text (an indented tree from the sinks down to the sources), json and
dot (Graphviz: weir explain tpch ... --format dot | dot -Tsvg > plan.svg).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{err: fmt.Errorf("unknown program %q: want tpch", args[0])}
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newExplainTPCHCommand(g))
	return cmd
}

func newExplainTPCHCommand(g *globalOptions) *cobra.Command {
	o := &explainTPCHOptions{}
	cmd := &cobra.Command{
		Use:   "tpch --data DIR --query N [--format text|json|dot] [--analyze]",
		Short: "Print the optimized plan of a TPC-H query",
		Long: `Print the optimized plan of TPC-H query N over the Parquet tables in DIR (see
weir tpch --help) as weir tpch would run it with the same --parallelism and
--memory, without running it. With --analyze, run the query (its rows are not
printed) and print the plan with what each operator did. With --adaptive and
--analyze the query runs adaptively (see weir tpch --help) and the plan marks
the operators planned again as "replanned", with a note saying which measured
input changed them; without --analyze the plan is the first planning.
Queries: ` + queryList() + `.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			if err := checkPlanFormat("format", o.format); err != nil {
				return err
			}
			if err := o.check(g); err != nil {
				return err
			}
			if !o.analyze {
				opts, done := g.datasetOptions(cmd, "explain tpch")
				defer done()
				p, err := planTPCH(dataset.New(opts), &o.tpchOptions)
				if err != nil {
					return err
				}
				return writePlan(cmd.OutOrStdout(), p, o.format)
			}
			res, _, err := executeTPCH(cmd, g, &o.tpchOptions, "explain tpch")
			if err != nil {
				return err
			}
			return writePlan(cmd.OutOrStdout(), res.Plan, o.format)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "", "directory of the TPC-H tables as <table>.parquet (required)")
	f.IntVar(&o.query, "query", 0, "number of the TPC-H query (required): "+queryList())
	f.StringVar(&o.format, "format", formatText, "format of the plan: text, json or dot")
	f.BoolVar(&o.analyze, "analyze", false, "run the query and show what each operator did")
	g.registerAdaptive(f)
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("query")
	return cmd
}

// planTPCH builds query o.query on env and plans it without running it.
func planTPCH(env *dataset.Env, o *tpchOptions) (*dataset.Plan, error) {
	s, _ := tpch.Query(o.query)
	if _, err := s.Build(env, o.data); err != nil {
		return nil, err
	}
	p, err := env.Plan()
	if err != nil {
		return nil, fmt.Errorf("tpch: q%d: %w", o.query, err)
	}
	return p, nil
}

// executeTPCH runs query o.query under --cpuprofile, drawing progress as job,
// and returns the run's result (its Optimized plan holds the actuals) and the
// query's rows.
func executeTPCH(cmd *cobra.Command, g *globalOptions, o *tpchOptions, job string) (*dataset.Result, tpch.Result, error) {
	opts, progressDone := g.datasetOptions(cmd, fmt.Sprintf("%s q%d", job, o.query))
	defer progressDone()
	env := dataset.New(opts)
	s, _ := tpch.Query(o.query)
	rows, err := s.Build(env, o.data)
	if err != nil {
		return nil, tpch.Result{}, err
	}
	stopProfile, err := g.startProfile()
	if err != nil {
		return nil, tpch.Result{}, err
	}
	res, err := env.Execute(cmd.Context())
	if perr := stopProfile(); err == nil && perr != nil {
		err = perr
	}
	if err != nil {
		return nil, tpch.Result{}, fmt.Errorf("tpch: q%d: %w", o.query, err)
	}
	return res, tpch.Result{Columns: s.Columns, Rows: rows()}, nil
}
