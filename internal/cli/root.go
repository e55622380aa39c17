// Package cli is weir's command line: a cobra root command and one file per
// job command. The flags every job shares (--memory, --tmp, --parallelism)
// are registered on the job commands only, not on the data generators.
//
// Contract: Execute runs a command line and returns the process's exit status;
// only cmd/weir's main exits. Errors reach the user as one line on stderr and
// status 1; a bad flag or argument adds a hint to --help. A stream job stopped
// by Ctrl-C or SIGTERM (ErrInterrupted) exits with status 130 once it has
// cleaned up.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// globalOptions are the flags every job command shares.
type globalOptions struct {
	memory      Size
	tmp         string
	parallelism int
	adaptive    bool   // --adaptive of the commands that run DataSet programs
	progress    bool   // --progress: draw progress on stderr when it is a terminal
	cpuProfile  string // hidden --cpuprofile
}

// adaptiveUsage is the help of --adaptive (weir tpch, weir run, weir explain).
const adaptiveUsage = "measure the inputs of joins and crosses first and plan what reads them again with their real sizes (shown as re-planned in the analyzed plan)"

// registerJob adds the flags every job shares to f: --memory, --tmp,
// --parallelism, --progress and the hidden --cpuprofile.
func (g *globalOptions) registerJob(f *pflag.FlagSet) {
	f.Var(&g.memory, "memory", "memory budget of the process, e.g. 256MiB or 2GiB: the Go runtime's soft limit, of which the operators reserve all but min(32MiB, half); by default a quarter of the machine's or the cgroup's memory, at least 256MiB")
	f.StringVar(&g.tmp, "tmp", "", "directory for spill files (default: the system's temporary directory)")
	f.IntVar(&g.parallelism, "parallelism", 0, "operator instances to run at once (default: the number of CPUs)")
	f.BoolVar(&g.progress, "progress", true, "show the job's progress on stderr when it is a terminal (--progress=false: never)")
	f.StringVar(&g.cpuProfile, "cpuprofile", "", "write a CPU profile of the job to this file")
	_ = f.MarkHidden("cpuprofile")
}

// registerProgram adds the flags of a job that runs a DataSet program to f:
// registerJob's and --adaptive.
func (g *globalOptions) registerProgram(f *pflag.FlagSet) {
	g.registerJob(f)
	f.BoolVar(&g.adaptive, "adaptive", false, adaptiveUsage)
}

// profile runs fn under the CPU profile asked for by --cpuprofile.
func (g *globalOptions) profile(fn func() error) error {
	stop, err := g.startProfile()
	if err != nil {
		return err
	}
	err = fn()
	if perr := stop(); err == nil && perr != nil {
		err = perr
	}
	return err
}

// startProfile starts the CPU profile asked for by --cpuprofile and returns the
// function that ends it.
func (g *globalOptions) startProfile() (stop func() error, err error) {
	if g.cpuProfile == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(g.cpuProfile)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// workers returns --parallelism, or the number of CPUs the runtime uses.
func (g *globalOptions) workers() int {
	if g.parallelism > 0 {
		return g.parallelism
	}
	return runtime.GOMAXPROCS(0)
}

func (g *globalOptions) validate() error {
	if g.memory <= 0 {
		return &usageError{err: fmt.Errorf("--memory must be positive, got %d bytes", int64(g.memory))}
	}
	if g.parallelism < 0 {
		return &usageError{err: fmt.Errorf("--parallelism must be positive, got %d", g.parallelism)}
	}
	return nil
}

// NewRootCommand returns the weir command with its job commands.
func NewRootCommand() *cobra.Command {
	g := &globalOptions{memory: Size(DefaultMemory())}
	root := &cobra.Command{
		Use:           "weir",
		Short:         "weir runs batch and stream dataflow jobs within a memory budget",
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			if clusterEnv(cmd.Context()) == nil { // a TaskManager's job: the TaskManager set the limit
				g.limitRuntime()
			}
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err: err} })
	tpch := tpchJob().command(g)
	root.AddCommand(newQuickstartCommand(g), newSortCommand(g), newGenCommand(), tpch, newRunCommand(g),
		nexmarkJob().command(g), newExplainCommand(g), newSavepointCommand(), newJobManagerCommand(), newTaskManagerCommand(g))
	root.AddCommand(newListCommand(), newCancelCommand(), newStopCommand())
	return root
}

// usageError is a bad flag or argument: its message gets a hint to --help.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// Unrecoverable reports true: a bad flag fails a job on a cluster without
// restarts.
func (e *usageError) Unrecoverable() bool { return true }

// jobError marks an error returned by a command's RunE, so that Execute can tell
// it from cobra's own argument checks.
type jobError struct{ err error }

func (e *jobError) Error() string { return e.err.Error() }
func (e *jobError) Unwrap() error { return e.err }

// runE adapts a job to cobra.Command.RunE, marking its errors.
func runE(job func(cmd *cobra.Command) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if err := job(cmd); err != nil {
			var ue *usageError
			if errors.As(err, &ue) {
				return err
			}
			return &jobError{err: err}
		}
		return nil
	}
}

// Execute runs the command line args (without the program name) and returns the
// exit status: 0 on success, ExitInterrupted (130) for ErrInterrupted, 1 after
// printing one line on stderr.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewRootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // as it was: --memory sets it per command
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if errors.Is(err, ErrInterrupted) {
		fmt.Fprintln(stderr, "weir: interrupted")
		return ExitInterrupted
	}
	msg := errorLine(err)
	var je *jobError
	if !errors.As(err, &je) {
		path := "weir"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		msg = fmt.Sprintf("%s (see '%s --help')", msg, path)
	}
	fmt.Fprintf(stderr, "weir: %s\n", msg)
	return 1
}

// errorLine is the first line of err's message. When err holds several errors
// (errors.Join, as a program's build errors are), it says how many more there
// were: "...: (and 2 more errors)".
func errorLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return msg
	}
	n := -1
	for _, e := range joined.Unwrap() {
		if e != nil {
			n++
		}
	}
	switch {
	case n == 1:
		msg += " (and 1 more error)"
	case n > 1:
		msg += fmt.Sprintf(" (and %d more errors)", n)
	}
	return msg
}
