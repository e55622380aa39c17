package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
	"github.com/weirdata/weir/stream"
)

// ErrInterrupted is the error of a job stopped by Ctrl-C or SIGTERM (its
// context ended) after it cleaned up: Execute reports it with status
// ExitInterrupted.
var ErrInterrupted = errors.New("interrupted")

// ExitInterrupted is the exit status of an interrupted job: 128 + SIGINT,
// as shells report a process ended by Ctrl-C.
const ExitInterrupted = 130

// streamJob is one DataStream program of weir run (Flink's streaming
// examples, package examples/streaming). Its flags are defined in bind.
type streamJob struct {
	name  string // the subcommand: "streaming-wordcount"
	args  string // the job's flags in the usage line
	short string
	long  string
	// bind registers the job's flags on f and returns the program over their
	// values; the program checks them (a bad value is a *usageError) and runs.
	bind func(f *pflag.FlagSet) streamProgram
}

// streamProgram runs one stream job with the values of its flags.
type streamProgram func(ctx context.Context, o streaming.Options) error

// streamJobs returns the stream jobs of weir run, in the order help lists them.
func streamJobs() []*streamJob {
	return []*streamJob{streamingWordCountJob(), stateMachineJob(), streamIterateJob(), sessionWindowingJob(), topSpeedJob(), windowWordCountJob(), windowJoinJob(), sideOutputJob(), socketWindowWordCountJob(), windowStatsJob()}
}

// command returns the cobra command of j under `weir run`. A run whose
// context ends (Ctrl-C) returns ErrInterrupted once the job has stopped.
// With --savepoint-dir, SIGTERM stops the job with a savepoint and the run
// prints "Savepoint completed. Path: <path>" and succeeds.
func (j *streamJob) command(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   j.name + " " + j.args,
		Short: j.short,
		Long:  j.long + checkpointHelp,
		Args:  cobra.NoArgs,
	}
	run := j.bind(cmd.Flags())
	g.registerJob(cmd.Flags())
	var ck checkpointFlags
	ck.register(cmd.Flags())
	cmd.RunE = runE(func(cmd *cobra.Command) error {
		if err := g.validate(); err != nil {
			return err
		}
		ctx := cmd.Context()
		o := streaming.Options{
			Stream: stream.Options{Parallelism: g.workers(), Memory: g.managed(), TmpDir: g.tmp},
			Stdout: cmd.OutOrStdout(),
		}
		if err := ck.apply(&o); err != nil {
			return err
		}
		var starts []func(*stream.Job)
		if p := g.streamProgress(cmd.ErrOrStderr(), "run "+j.name); p != nil {
			p.checkpointing = ck.checkpointing()
			starts = append(starts, p.started)
			defer p.stop()
		}
		var sp *savepointStop
		if ck.savepointDir != "" {
			sp = &savepointStop{dir: ck.savepointDir}
			starts = append(starts, func(jb *stream.Job) { sp.started(ctx, jb) })
			defer onTerminate(ctx, func() { sp.stop(ctx) })()
		}
		if len(starts) > 0 {
			o.Stream.Started = func(jb *stream.Job) {
				for _, f := range starts {
					f(jb)
				}
			}
		}
		err := g.profile(func() error { return run(ctx, o) })
		if sp != nil {
			path, serr := sp.result()
			if err == nil && path != "" {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "Savepoint completed. Path: %s\n", path)
				return err
			}
			if err != nil && serr != nil && ctx.Err() == nil {
				return fmt.Errorf("stop with savepoint: %w", serr)
			}
		}
		if err != nil && ctx.Err() != nil {
			return ErrInterrupted
		}
		return err
	})
	return cmd
}

// checkpointHelp ends the help of every stream job: its checkpoint and
// savepoint flags.
const checkpointHelp = `

Checkpoints and savepoints (Flink's): --checkpoint-dir DIR checkpoints the job's
state every --checkpoint-interval (1s by default) into DIR; after a crash the same
command resumes from the latest complete checkpoint there, and once the input ended
it finds the job finished and does nothing. --output part files are then committed
as each checkpoint completes (exactly once: the names of files not committed start
with a dot). --checkpointing-mode at-least-once does not align barriers.
--unaligned-checkpoints lets barriers overtake records in flight, which the
checkpoint stores. --state-backend heap keeps keyed state in memory, disk in an
embedded Pebble store under the temporary directory; --incremental-checkpoints
then stores only the files new since the last checkpoint. --rate N throttles the sources
to N records per second. With --savepoint-dir DIR, SIGTERM stops the job with a
savepoint under DIR, prints "Savepoint completed. Path: <path>" and exits 0
(Ctrl-C cancels, status 130); --from-savepoint PATH starts from it, at any
--parallelism, and --allow-non-restored-state skips the state of operators the
job no longer has.`

// explainCommand returns the cobra command of j under `weir explain`: the
// job's own flags and --format. The program is built and its stream graph
// (Env.Plan: tasks, chained operators, partitioning, parallelism) printed
// to stdout; nothing runs.
func (j *streamJob) explainCommand(g *globalOptions) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   j.name + " " + j.args + " [--format text|json|dot]",
		Short: "Print the stream graph of " + j.name + ": " + j.short,
		Long: `Print the stream graph of weir run ` + j.name + ` with the same flags, without
running it: its tasks (a chain of operators each, with its parallelism), and
every edge, chained inside a task or partitioned between tasks (FORWARD,
REBALANCE, BROADCAST, SHUFFLE, HASH). With the checkpoint flags of weir run
(--checkpoint-dir, --checkpoint-interval, --checkpointing-mode,
--unaligned-checkpoints, --state-backend, --incremental-checkpoints) the plan
names the checkpoint configuration, Flink's defaults filled in, on its second
line; nothing is opened or written. --analyze runs the job, its output
discarded, and adds what it did: per task and chained operator the records in
and out, and each checkpoint's duration, size written, full size, alignment and
bytes in flight, with the restores. See weir explain --help for the formats
and weir run ` + j.name + ` --help for the job:

` + j.long,
		Args: cobra.NoArgs,
	}
	run := j.bind(cmd.Flags())
	g.registerJob(cmd.Flags())
	ck := checkpointFlags{plan: true}
	ck.register(cmd.Flags())
	cmd.Flags().StringVar(&format, "format", formatText, "format of the plan: text, json or dot")
	var analyze bool
	cmd.Flags().BoolVar(&analyze, "analyze", false, "run the job (its output discarded), then print the plan with the records each operator read and wrote and the checkpoints taken")
	cmd.RunE = runE(func(cmd *cobra.Command) error {
		if err := g.validate(); err != nil {
			return err
		}
		if err := checkPlanFormat("format", format); err != nil {
			return err
		}
		var plan *stream.Plan
		o := streaming.Options{
			Stream: stream.Options{Parallelism: g.workers(), Memory: g.managed(), TmpDir: g.tmp,
				Planned: func(p *stream.Plan) error {
					plan = p
					return errPlanned
				}},
			Stdout: io.Discard,
		}
		if analyze {
			ck.plan = false
			var job *stream.Job
			o.Stream.Planned = func(p *stream.Plan) error {
				plan = p
				return nil
			}
			o.Stream.Started = func(j *stream.Job) { job = j }
			if err := ck.apply(&o); err != nil {
				return err
			}
			if err := run(cmd.Context(), o); err != nil {
				return err
			}
			if plan == nil || job == nil {
				return errors.New("the job built no stream graph")
			}
			res, _ := job.Wait()
			var h *stream.CheckpointHistory
			if ck.checkpointing() {
				c := job.Checkpoints()
				h = &c
			}
			return writePlan(cmd.OutOrStdout(), newStreamAnalyzed(plan, res, h), format)
		}
		if err := ck.apply(&o); err != nil {
			return err
		}
		err := run(cmd.Context(), o)
		if plan == nil || !errors.Is(err, errPlanned) {
			if err == nil {
				err = errors.New("the job built no stream graph")
			}
			return err
		}
		if c := plan.Checkpointing; c != nil && ck.dir != "" {
			c.Storage, c.Incremental = ck.dir, ck.incremental
		}
		return writePlan(cmd.OutOrStdout(), plan, format)
	})
	return cmd
}
