package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/cluster/spread"
	"github.com/weirdata/weir/cluster/view"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/checkpoint/s3"
)

// submitFlags are the flags of a job command that submits the job to a
// cluster instead of running it: --jobmanager, --detached, --rest-token.
type submitFlags struct {
	jobmanager string
	detached   bool
	token      string
}

func (s *submitFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.jobmanager, "jobmanager", "", "submit the job to the JobManager at this REST URL (http://host:port) instead of running it here")
	f.BoolVar(&s.detached, "detached", false, "with --jobmanager, return once the job is submitted instead of waiting for its end")
	f.StringVar(&s.token, "rest-token", "", "the REST API's bearer token: sent to --jobmanager, required by --web-ui (default: $WEIR_REST_TOKEN; open the web UI once as http://host:port/?token=<token>)")
}

// submitOnly are the flags a submission leaves out.
var submitOnly = map[string]bool{"jobmanager": true, "detached": true, "rest-token": true, "web-ui": true, "progress": true, "cpuprofile": true}

// submission returns the arguments of cmd as the cluster's TaskManager runs
// them: its path under weir and the flags set, local paths made absolute.
func submission(cmd *cobra.Command) []string {
	args := strings.Fields(cmd.CommandPath())[1:]
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if submitOnly[fl.Name] {
			return
		}
		v := fl.Value.String()
		if v != "" && fl.Value.Type() == "string" && (pathFlag(fl.Name) || fl.Name == "data" || fl.Name == "edges" ||
			strings.Contains(fl.Name, "savepoint") || fl.Name == "documents" || fl.Name == "ranks" || fl.Name == "visits") && !s3.IsURL(v) {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		args = append(args, "--"+fl.Name+"="+v)
	})
	return args
}

// submit sends cmd's job to the JobManager and prints its id. Detached,
// it returns then, the id on stdout. Otherwise it prints the id on stderr,
// waits for the job's end and prints the job's standard output (the
// attempt that finished) on stdout, as the job prints it embedded: nil
// when it FINISHED and all of its output came back.
func (s *submitFlags) submit(cmd *cobra.Command) error {
	token := s.token
	if token == "" {
		token = os.Getenv("WEIR_REST_TOKEN")
	}
	ctx := cmd.Context()
	c := rest.NewClient(strings.TrimSuffix(s.jobmanager, "/"), token)
	jid, err := c.Submit(ctx, rest.Submission{Args: submission(cmd)})
	if err != nil {
		return fmt.Errorf("submit to %s: %w", s.jobmanager, err)
	}
	if s.detached {
		_, err := fmt.Fprintf(cmd.OutOrStdout(), "Job has been submitted with JobID %s\n", jid)
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "Job has been submitted with JobID %s\n", jid)
	// the first polls come fast, so that a short job's answer does not
	// wait a whole interval
	last, wait := "", 10*time.Millisecond
	for {
		d, err := c.Job(ctx, jid)
		switch {
		case err != nil && ctx.Err() != nil:
			return ErrInterrupted
		case err != nil:
			return fmt.Errorf("job %s: %w", jid, err)
		}
		if d.State != last {
			fmt.Fprintf(cmd.ErrOrStderr(), "weir: job %s is %s\n", jid, d.State)
			last = d.State
		}
		switch d.State {
		case rest.StateFinished:
			return finished(ctx, cmd, c, jid)
		case rest.StateFailed:
			return fmt.Errorf("job %s failed: %s", jid, d.Failure)
		case rest.StateCanceled:
			return fmt.Errorf("job %s was canceled", jid)
		}
		select {
		case <-ctx.Done():
			return ErrInterrupted
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// finished prints the standard output of finished job jid.
func finished(ctx context.Context, cmd *cobra.Command, c *rest.Client, jid string) error {
	r, err := c.Result(ctx, jid)
	if err != nil {
		return fmt.Errorf("job %s finished, but its output did not come: %w", jid, err)
	}
	if r.Result == nil {
		return fmt.Errorf("job %s finished, but its result is %s", jid, r.Status.ID)
	}
	if _, err := cmd.OutOrStdout().Write(r.Result.Stdout); err != nil {
		return err
	}
	if r.Result.StdoutDropped > 0 {
		return fmt.Errorf("job %s finished, but %d bytes of its standard output past the first %s are only on its TaskManager's standard output: write large results with --output",
			jid, r.Result.StdoutDropped, Size(cluster.MaxStdout))
	}
	return nil
}

// clusterEnvKey is the context key of the cluster.Env of a job a
// TaskManager runs (Program.Run).
type clusterEnvKey struct{}

func clusterEnv(ctx context.Context) *cluster.Env {
	if ctx == nil { // a command not executed (cobra's Context is nil then)
		return nil
	}
	env, _ := ctx.Value(clusterEnvKey{}).(*cluster.Env)
	return env
}

// Program is the weir binary's cluster.Program: the jobs of `weir run`
// and `weir tpch`, run in process with the attempt's environment.
func Program() cluster.Program { return clusterProgram{} }

// clusterProgram runs jobs on a TaskManager of memory bytes and slots
// slots: a job's --memory is its share, memory*granted/slots (memory 0:
// the job's own --memory).
type clusterProgram struct {
	memory Size
	slots  int
}

// find parses args ("run <job> flags..." or "tpch flags...") as the
// command line does and returns the job's command.
func find(args []string) (*cobra.Command, error) {
	if len(args) == 0 || args[0] != "run" && args[0] != "tpch" {
		return nil, fmt.Errorf("a cluster runs the jobs of weir run and weir tpch, not %q", strings.Join(args, " "))
	}
	root := NewRootCommand()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return nil, err
	}
	if cmd.RunE == nil || cmd.Name() == "run" {
		return nil, fmt.Errorf("no job named in %q", strings.Join(args, " "))
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return nil, err
	}
	if len(cmd.Flags().Args()) > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", cmd.Flags().Args())
	}
	return cmd, nil
}

// Check parses args and returns the job's name and its --parallelism (0:
// the slots of a TaskManager).
func (clusterProgram) Check(args []string) (string, int, error) {
	cmd, err := find(args)
	if err != nil {
		return "", 0, err
	}
	if fl := cmd.Flags().Lookup("jobmanager"); fl != nil && fl.Value.String() != "" {
		return "", 0, errors.New("a job on the cluster does not take --jobmanager")
	}
	p := 0
	if fl := cmd.Flags().Lookup("parallelism"); fl != nil && fl.Changed {
		p, _ = strconv.Atoi(fl.Value.String())
	}
	return strings.TrimPrefix(cmd.CommandPath(), "weir "), p, nil
}

// Spreads reports whether job args may run spread over several
// TaskManagers: the DataSet jobs (weir tpch and weir run's), iterations
// included, unless --adaptive (its second planning needs the sizes of all
// shares); and the stream jobs of weir run that write their results to
// --output (printed ones would reach only the first share's stdout).
func (clusterProgram) Spreads(args []string) bool {
	cmd, err := find(args)
	if err != nil {
		return false
	}
	flag := func(name string) string {
		if fl := cmd.Flags().Lookup(name); fl != nil {
			return fl.Value.String()
		}
		return ""
	}
	if flag("adaptive") == "true" {
		return false
	}
	if batchJobs()[cmd.CommandPath()] != nil {
		return true
	}
	for _, j := range streamJobs() {
		if cmd.CommandPath() == "weir run "+j.name {
			return flag("output") != ""
		}
	}
	return false
}

// batchJobs returns the DataSet jobs by command path ("weir tpch", "weir
// run wordcount").
func batchJobs() map[string]*job {
	m := map[string]*job{"weir tpch": tpchJob()}
	for _, j := range runJobs() {
		m["weir run "+j.name] = j
	}
	return m
}

// Run runs the job in process: at min(--parallelism, env.Slots), within
// its share of the TaskManager's memory, a stream
// job checkpointing into env.CheckpointDir through env.Gate, from
// env.Restore, without restarts of its own (the JobManager restarts it).
func (c clusterProgram) Run(ctx context.Context, args []string, env cluster.Env) error {
	cmd, err := find(args)
	if err != nil {
		return err
	}
	p := env.Slots
	if env.Spread != nil { // the parallelism of the whole attempt: this share runs its slots' subtasks
		p = 0
		for _, n := range env.Spread.Slots {
			p += n
		}
	}
	if fl := cmd.Flags().Lookup("parallelism"); fl != nil && fl.Changed {
		if n, _ := strconv.Atoi(fl.Value.String()); n > 0 {
			p = min(n, p)
		}
	}
	args = append(args[:len(args):len(args)], "--parallelism", strconv.Itoa(max(p, 1)), "--progress=false")
	if c.memory > 0 && c.slots > 0 {
		args = append(args, "--memory", Size(int64(c.memory)*int64(max(env.Slots, 1))/int64(c.slots)).String())
	}
	if cmd.Flags().Lookup("checkpoint-dir") != nil {
		args = append(args, "--checkpoint-dir", env.CheckpointDir, "--restart-strategy", "none")
		if env.Restore != "" {
			args = append(args, "--from-savepoint", env.Restore)
		}
	}
	root := NewRootCommand()
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	// the TaskManager's signals are its own: no job takes over SIGTERM
	ctx = context.WithValue(ctx, terminatorKey{}, (*Terminator)(nil))
	_, err = root.ExecuteContextC(context.WithValue(ctx, clusterEnvKey{}, &env))
	return err
}

// streamControl is a running stream job as its TaskManager drives it.
type streamControl struct {
	job  *stream.Job
	plan *stream.Plan
}

func (c streamControl) Savepoint(ctx context.Context, dir string, stop bool) (string, error) {
	if stop {
		return c.job.StopWithSavepoint(ctx, dir)
	}
	return c.job.TriggerSavepoint(ctx, dir)
}

func (c streamControl) Report() []byte { return view.Encode(c.job, c.plan) }

func (c streamControl) Vertices() []cluster.Vertex {
	if c.plan == nil {
		return nil
	}
	vs := make([]cluster.Vertex, 0, len(c.plan.Tasks))
	for _, t := range c.plan.Tasks {
		name := t.Name
		for _, o := range t.Operators[1:] {
			name += " -> " + o.Name
		}
		vs = append(vs, cluster.Vertex{ID: fmt.Sprintf("%032x", t.ID), Name: name, Parallelism: t.Parallelism})
	}
	return vs
}

// joinCluster sets o for a job a TaskManager runs: its checkpoints pass
// env's gate, and env hears of the job's start.
func joinCluster(env *cluster.Env, o *stream.Options, starts *[]func(*stream.Job), configure *func(*stream.Env)) {
	var plan *stream.Plan
	prev := o.Planned
	o.Planned = func(p *stream.Plan) error {
		plan = p
		if prev != nil {
			return prev(p)
		}
		return nil
	}
	o.Spread = spread.Stream(env.Spread, env.JobID)
	conf := *configure
	*configure = func(e *stream.Env) {
		if conf != nil {
			conf(e)
		}
		if cfg := e.CheckpointConfig(); cfg != nil {
			cfg.CompletionGate = env.Gate
		}
	}
	if env.Started != nil {
		*starts = append(*starts, func(j *stream.Job) { env.Started(streamControl{job: j, plan: plan}) })
	}
}
