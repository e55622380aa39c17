package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Plan formats of weir explain's --format.
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

// printablePlan is a plan that prints as text, JSON and DOT: a DataSet
// program's (optimizer's forms, as its golden files hold them) or a stream
// job's graph.
type printablePlan interface {
	Text() string
	JSON() ([]byte, error)
	DOT() string
}

// writePlan writes p in format: its Text, JSON or DOT.
func writePlan(w io.Writer, p printablePlan, format string) error {
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

// explainFlags are weir explain's own flags, beside the job's.
type explainFlags struct {
	format  string // --format
	analyze bool   // --analyze: run the job, print the plan with what each operator did
}

func (e *explainFlags) register(f *pflag.FlagSet) {
	f.StringVar(&e.format, "format", formatText, "format of the plan: text, json or dot")
	f.BoolVar(&e.analyze, "analyze", false, "run the job (its result is not printed) and show what each operator did")
}

// explainJobs returns the jobs weir explain knows: those of weir run and weir
// tpch.
func explainJobs() []*job { return append(runJobs(), tpchJob()) }

// jobNames lists the names of js: "a, b or c".
func jobNames(js []*job) string {
	names := make([]string, len(js))
	for i, j := range js {
		names[i] = j.name
	}
	return joinNames(names)
}

// explainJobNames lists the jobs of weir explain: the DataSet jobs, then
// the stream jobs.
func explainJobNames() string {
	var names []string
	for _, j := range explainJobs() {
		names = append(names, j.name)
	}
	for _, j := range streamJobs() {
		names = append(names, j.name)
	}
	return joinNames(append(names, "nexmark"))
}

// runJobNames lists the jobs of weir run: the DataSet jobs, then the stream jobs.
func runJobNames() string {
	var names []string
	for _, j := range runJobs() {
		names = append(names, j.name)
	}
	for _, j := range streamJobs() {
		names = append(names, j.name)
	}
	return joinNames(names)
}

func joinNames(names []string) string {
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// newExplainCommand is `weir explain <job>`, one subcommand per job of weir
// run and weir tpch, each with the job's own flags.
func newExplainCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain <job> [the job's flags] [--format text|json|dot] [--analyze]",
		Short: "Print the optimized plan of a job, or run it and print what each operator did",
		Long: `Print the plan the optimizer chooses for a job of weir run or weir tpch, with the
job's own flags, without running it: every operator with its parallelism, driver
strategy, estimates and costs, and how each of its inputs is shipped, pre-sorted
and exchanged. A job without input flags is planned over its default data. With
--analyze the job runs (its result lines are not printed) and the plan shows what
each operator did: records emitted, busy time, peak managed memory and bytes
spilled. The plan goes to stdout.

For the stream jobs it prints the stream graph instead: the tasks, each a chain
of operators with its parallelism, and how records are partitioned between tasks
(--analyze does not apply).

Formats: text (an indented tree from the sinks down to the sources; for stream
jobs a task and its operators a line each), json and dot (Graphviz: weir explain
tpch ... --format dot | dot -Tsvg > plan.svg).

Jobs: ` + explainJobNames() + `.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{err: fmt.Errorf("unknown job %q: want %s", args[0], explainJobNames())}
			}
			return cmd.Help()
		},
	}
	for _, j := range explainJobs() {
		cmd.AddCommand(j.explainCommand(g))
	}
	for _, j := range streamJobs() {
		cmd.AddCommand(j.explainCommand(g))
	}
	cmd.AddCommand(nexmarkJob().explainCommand(g))
	return cmd
}
