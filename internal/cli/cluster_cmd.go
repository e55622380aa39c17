package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weirdata/weir/cluster/ha"
	"github.com/weirdata/weir/cluster/ha/etcd"
	"github.com/weirdata/weir/cluster/jobmanager"
	"github.com/weirdata/weir/cluster/taskmanager"
	"github.com/weirdata/weir/cluster/view"
	"github.com/weirdata/weir/metrics/prometheus"
	"github.com/weirdata/weir/web"
)

// haFlags are the high-availability flags of weir jobmanager and weir
// taskmanager.
type haFlags struct {
	mode      string
	endpoints string
	clusterID string
	leaseTTL  time.Duration
	namespace string
}

func (h *haFlags) register(f *pflag.FlagSet) {
	f.StringVar(&h.mode, "ha", "none", "high availability: none, etcd (leader election and job metadata in etcd) or kubernetes (in a Lease and a ConfigMap)")
	f.StringVar(&h.endpoints, "ha-etcd-endpoints", "", "with --ha etcd: etcd's client URLs, comma-separated")
	f.StringVar(&h.clusterID, "ha-cluster-id", "default", "with --ha etcd or kubernetes: the cluster's id, which names its keys or objects")
	f.DurationVar(&h.leaseTTL, "ha-lease-ttl", 10*time.Second, "with --ha etcd or kubernetes: how long a leadership outlives its JobManager's silence")
	f.StringVar(&h.namespace, "ha-kubernetes-namespace", "", "with --ha kubernetes: the namespace of the Lease and the ConfigMap (default: the pod's, else \"default\")")
}

// open returns the HA store the flags name, nil for none.
func (h *haFlags) open(ctx context.Context) (ha.Store, error) {
	if h.mode != "kubernetes" && h.namespace != "" {
		return nil, &usageError{err: errors.New("--ha-kubernetes-namespace is for --ha kubernetes")}
	}
	switch h.mode {
	case "none", "":
		return nil, nil
	case "etcd":
		if h.endpoints == "" {
			return nil, &usageError{err: errors.New("--ha etcd needs --ha-etcd-endpoints")}
		}
		s, err := etcd.Open(ctx, etcd.Config{Endpoints: strings.Split(h.endpoints, ","), ClusterID: h.clusterID, LeaseTTL: h.leaseTTL})
		if err != nil {
			return nil, fmt.Errorf("--ha etcd: %w", err)
		}
		return s, nil
	case "kubernetes":
		return h.openKubernetes()
	}
	return nil, &usageError{err: fmt.Errorf("--ha must be none, etcd or kubernetes, got %q", h.mode)}
}

// newJobManagerCommand is `weir jobmanager`.
func newJobManagerCommand() *cobra.Command {
	var opts jobmanager.Options
	var h haFlags
	cmd := &cobra.Command{
		Use:   "jobmanager --checkpoint-dir DIR [--rest-address H:P] [--rpc-address H:P] [--ha etcd|kubernetes ...]",
		Short: "Run a cluster's JobManager: it schedules the jobs submitted onto its TaskManagers",
		Long: `Run a JobManager of a weir cluster. TaskManagers (weir taskmanager) connect to
its --rpc-address; weir run <job> --jobmanager http://<rest-address> and weir tpch
--jobmanager submit jobs to its REST API (Flink's paths), which listens on
--rest-address and, with --rest-token T or $WEIR_REST_TOKEN, wants
"Authorization: Bearer T". The same address serves the web UI at / and the
jobs' metrics in Prometheus' text format at /metrics (Flink's names), with the
figures each TaskManager reports every heartbeat. A job runs in the slots of one TaskManager, at
min(its --parallelism, the slots granted); each attempt checkpoints under
--checkpoint-dir/<job id>/<attempt> (a directory every process sees, or an
s3:// URL), and the JobManager records each checkpoint before it completes. A
lost TaskManager (no heartbeat for --heartbeat-timeout, or its connection
broken) restarts its jobs from their latest checkpoint on the slots left, up to
--restart-attempts times, --restart-delay apart. A stream job running at fewer
slots than it asked is rescaled up (reactive mode) once a TaskManager offered
more slots for --rescale-stabilization and the job recorded a checkpoint: it
restarts from that checkpoint at the larger parallelism; a negative value turns
this off.

With --ha etcd, JobManagers of one --ha-cluster-id elect a leader in etcd; the
leader keeps the jobs and their latest checkpoints there, and a standby that
takes over restarts them. --ha kubernetes does the same in a Lease and a
ConfigMap of --ha-kubernetes-namespace, through the pod's service account
(or $KUBECONFIG outside a cluster). A JobManager that loses its leadership exits with
status 1.`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&opts.RESTAddress, "rest-address", "127.0.0.1:8081", "host:port of the REST API")
	f.StringVar(&opts.RPCAddress, "rpc-address", "127.0.0.1:6123", "host:port TaskManagers connect to")
	f.StringVar(&opts.CheckpointDir, "checkpoint-dir", "", "directory (or s3://bucket/prefix) of the jobs' checkpoints, seen by every process (required)")
	f.StringVar(&opts.RESTToken, "rest-token", "", "bearer token the REST API wants (default: $WEIR_REST_TOKEN)")
	f.DurationVar(&opts.HeartbeatTimeout, "heartbeat-timeout", 5*time.Second, "a TaskManager silent this long is lost")
	f.IntVar(&opts.RestartAttempts, "restart-attempts", 10, "restarts of a job before it fails")
	f.DurationVar(&opts.RestartDelay, "restart-delay", time.Second, "wait before each restart")
	f.DurationVar(&opts.RescaleStabilization, "rescale-stabilization", 2*time.Second, "how long more slots must stay before a job below its parallelism is rescaled up (negative: never)")
	f.DurationVar(&opts.RescaleCheckpointWait, "rescale-checkpoint-wait", 0, "how long a rescale waits for the job's next checkpoint to restore from (0: 1.5 times the job's last checkpoint interval; negative: no wait)")
	h.register(f)
	cmd.RunE = runE(func(cmd *cobra.Command) error {
		if opts.CheckpointDir == "" {
			return &usageError{err: errors.New("--checkpoint-dir is required")}
		}
		if opts.RESTToken == "" {
			opts.RESTToken = os.Getenv("WEIR_REST_TOKEN")
		}
		if opts.RestartAttempts < 0 {
			opts.RestartAttempts = 0
		}
		ctx := cmd.Context()
		store, err := h.open(ctx)
		if err != nil {
			return err
		}
		if store != nil {
			defer store.Close()
		}
		opts.HA, opts.Program, opts.Log = store, Program(), cmd.ErrOrStderr()
		opts.Handler = func(jm *jobmanager.JobManager) http.Handler {
			exp := prometheus.New(nil)
			exp.List(func() []prometheus.Listed { return view.Jobs(ctx, jm) })
			return web.Handler(view.Cluster{Source: jm}, exp, web.Options{Token: opts.RESTToken})
		}
		jm, err := jobmanager.New(opts)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "weir: JobManager: rpc %s, rest %s\n", jm.RPCAddress(), jm.RESTURL())
		return jm.Run(ctx)
	})
	return cmd
}

// newTaskManagerCommand is `weir taskmanager`.
func newTaskManagerCommand(g *globalOptions) *cobra.Command {
	var opts taskmanager.Options
	var h haFlags
	cmd := &cobra.Command{
		Use:   "taskmanager (--jobmanager H:P | --ha etcd|kubernetes ...) [--slots N] [--memory SIZE] [--data-address H:P]",
		Short: "Run a cluster's TaskManager: it runs the jobs its JobManager deploys in its slots",
		Long: `Run a TaskManager of a weir cluster. It registers with the JobManager at
--jobmanager (its --rpc-address), or with the leader etcd or Kubernetes names (--ha etcd|kubernetes), with
--slots slots and this binary's build fingerprint (a JobManager of another build
refuses it and it exits), sends a heartbeat every second and runs the jobs
deployed to it in process, within --memory. A TaskManager that does not hear
from its JobManager for the heartbeat timeout cancels its jobs and connects
again.

A batch job without iterations (weir tpch, weir run wordcount, weblog,
enum-triangles; not with --adaptive) that asks for more slots (--parallelism)
than one TaskManager has free runs spread over several: each runs the subtasks of its slots and
they exchange records over their data plane, a shuffle server listening on
--data-address (host:port; port 0 picks one). Its host must be one the other
TaskManagers reach: on Kubernetes, the pod's IP.`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&opts.JobManager, "jobmanager", "", "host:port of the JobManager's --rpc-address")
	f.IntVar(&opts.Slots, "slots", 1, "slots offered: the parallelism this TaskManager runs jobs at")
	f.StringVar(&opts.ID, "id", "", "name of this TaskManager (default: host-pid)")
	f.StringVar(&opts.DataAddress, "data-address", "127.0.0.1:0", "host:port its data plane (shuffle server) listens on for the shares of spread jobs; the host must be reachable by the other TaskManagers")
	f.Var(&g.memory, "memory", "memory budget of the process, e.g. 1GiB")
	h.register(f)
	cmd.RunE = runE(func(cmd *cobra.Command) error {
		if opts.Slots <= 0 {
			return &usageError{err: fmt.Errorf("--slots must be positive, got %d", opts.Slots)}
		}
		if g.memory <= 0 {
			return &usageError{err: fmt.Errorf("--memory must be positive, got %d bytes", int64(g.memory))}
		}
		ctx := cmd.Context()
		store, err := h.open(ctx)
		if err != nil {
			return err
		}
		if store != nil {
			defer store.Close()
		}
		if store == nil && opts.JobManager == "" {
			return &usageError{err: errors.New("give --jobmanager H:P, or --ha etcd or kubernetes")}
		}
		opts.HA, opts.Program, opts.Memory = store, clusterProgram{memory: g.memory, slots: opts.Slots}, int64(g.memory)
		opts.Stdout, opts.Stderr, opts.Log = cmd.OutOrStdout(), cmd.ErrOrStderr(), cmd.ErrOrStderr()
		return taskmanager.Run(ctx, opts)
	})
	return cmd
}
