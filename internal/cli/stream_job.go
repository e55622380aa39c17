package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
	var sub submitFlags
	sub.register(cmd.Flags())
	var ui webUIFlags
	ui.register(cmd.Flags(), &sub.token)
	cmd.RunE = runE(func(cmd *cobra.Command) error {
		if err := g.validate(); err != nil {
			return err
		}
		if sub.jobmanager != "" {
			return sub.submit(cmd)
		}
		ctx := cmd.Context()
		o := streaming.Options{
			Stream: stream.Options{Parallelism: g.workers(), Memory: g.managed(), TmpDir: g.tmp},
			Stdout: cmd.OutOrStdout(),
			Stderr: cmd.ErrOrStderr(),
		}
		ck.stderr = cmd.ErrOrStderr()
		o.Stream.Fingerprint = fingerprint(j.name, cmd.Flags())
		if env := clusterEnv(ctx); env != nil {
			// the checkpoint the JobManager recorded must outlive the
			// next one stored, which the gate may refuse
			ck.retained = 2
			// the first share of a spread attempt stores its checkpoints
			ck.follower = env.Spread != nil && env.Spread.Part != 0
		}
		err := ck.apply(&o)
		defer ck.close()
		if err != nil {
			return err
		}
		if !ck.resumes() {
			if err := emptyOutputs(cmd.Flags()); err != nil {
				return err
			}
		}
		ck.report(&o)
		var starts []func(*stream.Job)
		if p := g.streamProgress(cmd.ErrOrStderr(), "run "+j.name); p != nil {
			p.checkpointing = ck.checkpointing()
			starts = append(starts, p.started)
			defer p.stop()
		}
		u, err := ui.start(cmd.ErrOrStderr(), g.workers(), int64(g.memory), ck.savepointDir)
		if err != nil {
			return err
		}
		if u != nil {
			defer u.close()
			o.Stream.Planned = u.planned
			starts = append(starts, func(jb *stream.Job) { u.started(j.name, jb) })
		}
		var sp *savepointStop
		if ck.savepointDir != "" {
			sp = &savepointStop{dir: ck.savepointDir}
			starts = append(starts, func(jb *stream.Job) { sp.started(ctx, jb) })
			defer onTerminate(ctx, func() { sp.stop(ctx) })()
		}
		if env := clusterEnv(ctx); env != nil {
			joinCluster(env, &o.Stream, &starts, &o.Configure)
		}
		if len(starts) > 0 {
			o.Stream.Started = func(jb *stream.Job) {
				for _, f := range starts {
					f(jb)
				}
			}
		}
		err = g.profile(func() error { return run(ctx, o) })
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
		if u != nil && err == nil {
			if path := u.savepoint(); path != "" {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "Savepoint completed. Path: %s\n", path)
				return err
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
job no longer has.

Watching (Flink's web UI and REST API): --web-ui HOST:PORT serves, while the job
runs and until the command returns, a web UI of the job (its graph with records,
rates, busy and backpressured time and watermarks, its checkpoints, cancel and
stop-with-savepoint buttons), Flink's REST API (/overview, /jobs/<id>, ...) and
its metrics under Flink's names in Prometheus' text format at /metrics. An empty
HOST is 127.0.0.1; port 0 picks a free port; the address is printed on stderr.
A stop through it prints "Savepoint completed. Path: <path>" as SIGTERM does.
--rest-token (default $WEIR_REST_TOKEN) makes every request need
"Authorization: Bearer <token>"; open the UI once as http://HOST:PORT/?token=<token>.

Failures (Flink's restart strategies): a job that checkpoints restarts after a
failure from its latest checkpoint, by default up to 3 times in a row with an
exponential delay from --restart-delay (1s); --restart-strategy none, fixed-delay,
exponential-delay or failure-rate with --restart-attempts N and, for failure-rate,
--restart-failure-interval D choose otherwise. Each failed attempt is printed with
its cause and the checkpoint the next restores from; a failure no restart cures (a
line that does not parse, a record without timestamp, a checkpoint the state
backend cannot read, a checkpoint of another job) ends the job at once, status 1.
A failed checkpoint is printed and fails the job attempt unless
--tolerable-failed-checkpoints N allows N in a row. A damaged checkpoint is
printed and skipped for the one before; parts committed after the checkpoint
restored are then removed (and said), as their rows are written again.

One job at a time uses a checkpoint directory: a second is refused, naming the
first (pid, host, start). Its checkpoints record the job (its name, its input
and its operators); another job, or the same with another --input, is refused
(--allow-non-restored-state restores what maps). A stream job that does not
resume from a checkpoint refuses an --output directory that is not empty.`

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
and out, per subtask the user metrics of its functions (counters, gauges,
histograms and meters, as <operator>.<subtask>.<group>.<name>), and each
checkpoint's duration, size written, full size, alignment and bytes in flight,
with the restores. See weir explain --help for the formats
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
	cmd.Flags().BoolVar(&analyze, "analyze", false, "run the job (its output discarded), then print the plan with the records each operator read and wrote, the user metrics and the checkpoints taken")
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
			err := ck.apply(&o)
			defer ck.close()
			if err != nil {
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

// fingerprint is what names a run of job beyond its operators, for its
// checkpoints (stream.Options.Fingerprint): the job's name and the values
// of every flag that says what it computes (inputs, outputs, keys,
// windows, aggregates, lateness), paths made absolute, so that a
// checkpoint directory resumes only the job that wrote it, from any
// working directory. How it runs is left out (operational flags), so that
// a resume may change it: parallelism (a rescale), memory, checkpointing,
// restarts, the state backend, the source rate, progress.
func fingerprint(job string, f *pflag.FlagSet) string {
	var b strings.Builder
	b.WriteString(job)
	f.VisitAll(func(fl *pflag.Flag) {
		if operational[fl.Name] {
			return
		}
		v := fl.Value.String()
		if v != "" && fl.Value.Type() == "string" && pathFlag(fl.Name) {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		b.WriteString("\x00" + fl.Name + "=" + v)
	})
	return b.String()
}

// operational are the flags of how a stream job runs, not what it
// computes: a resume may change them.
var operational = map[string]bool{
	"allow-non-restored-state": true, "checkpoint-dir": true, "checkpoint-interval": true,
	"checkpointing-mode": true, "cpuprofile": true, "execution-mode": true, "from-savepoint": true,
	"help": true, "incremental-checkpoints": true, "memory": true, "parallelism": true, "progress": true,
	"rate": true, "restart-attempts": true, "restart-delay": true, "restart-failure-interval": true,
	"restart-strategy": true, "savepoint-dir": true, "state-backend": true, "tmp": true,
	"tolerable-failed-checkpoints": true, "unaligned-checkpoints": true, "web-ui": true, "rest-token": true,
}

// pathFlag says whether a stream job's flag names a file or directory.
func pathFlag(name string) bool {
	return strings.Contains(name, "input") || strings.Contains(name, "output") || name == "grades" || name == "salaries"
}

// emptyOutputs refuses output directories (--output, --late-output) that
// hold anything when the job does not resume from a snapshot: a stream
// job commits its part files next to what is there, so a second run
// would add its rows again. A resumed job writes on where its checkpoint
// left the directory.
func emptyOutputs(f *pflag.FlagSet) error {
	for _, name := range []string{"output", "late-output"} {
		fl := f.Lookup(name)
		if fl == nil || fl.Value.String() == "" {
			continue
		}
		dir := fl.Value.String()
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // missing: the sink creates it; unreadable: the sink says so
		}
		// hidden entries are the parts a killed run never committed, which
		// the sink removes
		ents = slices.DeleteFunc(ents, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), ".") })
		if len(ents) == 0 {
			continue
		}
		return &usageError{err: fmt.Errorf("--%s %s is not empty (it holds %s%s): a stream job that does not resume from a checkpoint writes into an empty or new directory; remove it or name another",
			name, dir, ents[0].Name(), more(len(ents)-1))}
	}
	return nil
}

func more(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}
