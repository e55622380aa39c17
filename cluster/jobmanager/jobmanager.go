package jobmanager

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/ha"
	"github.com/weirdata/weir/cluster/ha/memory"
	"github.com/weirdata/weir/cluster/internal/rpc"
	"github.com/weirdata/weir/cluster/rest"
)

// Options configure a JobManager.
type Options struct {
	// Program checks the jobs submitted (its TaskManagers run them).
	Program cluster.Program
	// RPCAddress is where TaskManagers connect (host:port; port 0 picks
	// one); RESTAddress where the REST API listens ("" for none).
	RPCAddress  string
	RESTAddress string
	// RESTToken, when set, is the bearer token every REST request needs.
	RESTToken string
	// Handler, when set, makes the handler RESTAddress serves (the web UI
	// with the REST API, cluster/view's answers); nil serves
	// rest.NewHandler over the JobManager with RESTToken.
	Handler func(*JobManager) http.Handler
	// CheckpointDir holds each attempt's checkpoints, under
	// <CheckpointDir>/<job id>/<attempt>: a directory every process sees,
	// or an s3:// URL (reached as the AWS variables say). The JobManager
	// removes superseded attempts' directories, and a FINISHED or CANCELED
	// job's.
	CheckpointDir string
	// HA is the cluster's high-availability store; nil is an in-memory
	// one (no standby can take over).
	HA ha.Store
	// HeartbeatTimeout is how long a TaskManager may stay silent before it
	// is declared lost; zero means 5 s. HeartbeatInterval (1 s) is how
	// often the JobManager sends its own heartbeat.
	HeartbeatTimeout  time.Duration
	HeartbeatInterval time.Duration
	// RestartAttempts is how many times a job is restarted after failures
	// (a lost TaskManager included) before it fails, RestartDelay the wait
	// before each (Flink's fixed-delay strategy); zero means 10 and 1 s.
	RestartAttempts int
	RestartDelay    time.Duration
	// RescaleStabilization is how long more slots must stay available to
	// a running job before it is rescaled up to them (reactive mode, see
	// the package's doc); zero means 2 s, a negative value turns reactive
	// scaling off.
	RescaleStabilization time.Duration
	// RescaleCheckpointWait is how long a rescale, once due, waits for the
	// attempt to record one more checkpoint, so that the next attempt
	// restores a checkpoint taken after the slots came instead of one up to
	// an interval old (Flink's rescale on checkpoint, FLIP-461). Zero means
	// 1.5 times the time between the attempt's last two recorded
	// checkpoints (Flink's default of max-delay-for-scale-trigger), and no
	// wait for an attempt that recorded fewer than two; a negative value
	// rescales at once.
	RescaleCheckpointWait time.Duration
	// Clock is the clock of heartbeats, restart delays and rescales; nil
	// is the system's.
	Clock clock.Clock
	// Log, when set, receives a line per event (registrations, losses,
	// deployments, restarts).
	Log io.Writer
}

// JobManager schedules the jobs submitted onto its TaskManagers' slots. It
// implements rest.Cluster.
type JobManager struct {
	opts  Options
	fp    cluster.Fingerprint
	ownHA bool // the HA store is the JobManager's own, in memory

	rpcLis  net.Listener
	restLis net.Listener
	grpc    *grpc.Server
	http    *http.Server

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced at every change of slots or jobs
	leading  bool
	lead     *ha.Leadership
	tms      map[string]*taskManager
	jobs     map[string]*job
	finished []*job // the jobs ended, for the overview
	ctx      context.Context
	// bg are the removals of superseded attempts' directories, which run
	// beside the jobs; none starts once closing
	bg      sync.WaitGroup
	closing bool
}

// New listens on the addresses of opts and returns the JobManager; Run
// serves.
func New(opts Options) (*JobManager, error) {
	if opts.Program == nil {
		return nil, errors.New("jobmanager: no program")
	}
	if opts.CheckpointDir == "" {
		return nil, errors.New("jobmanager: no checkpoint directory: jobs on a cluster need one all processes see")
	}
	if opts.HeartbeatTimeout <= 0 {
		opts.HeartbeatTimeout = 5 * time.Second
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = time.Second
	}
	if opts.RestartAttempts == 0 {
		opts.RestartAttempts = 10
	}
	if opts.RestartDelay <= 0 {
		opts.RestartDelay = time.Second
	}
	if opts.RescaleStabilization == 0 {
		opts.RescaleStabilization = 2 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = clock.System{}
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	ownHA := opts.HA == nil
	if ownHA {
		opts.HA = memory.NewServer(0).Open("default")
	}
	if opts.RPCAddress == "" {
		opts.RPCAddress = "127.0.0.1:6123"
	}
	fp, err := cluster.Own()
	if err != nil {
		return nil, fmt.Errorf("jobmanager: %w", err)
	}
	jm := &JobManager{opts: opts, fp: fp, ownHA: ownHA, changed: make(chan struct{}), tms: map[string]*taskManager{}, jobs: map[string]*job{}}
	if jm.rpcLis, err = net.Listen("tcp", opts.RPCAddress); err != nil {
		return nil, fmt.Errorf("jobmanager: rpc: %w", err)
	}
	if opts.RESTAddress != "" {
		if jm.restLis, err = net.Listen("tcp", opts.RESTAddress); err != nil {
			jm.rpcLis.Close()
			return nil, fmt.Errorf("jobmanager: rest: %w", err)
		}
	}
	return jm, nil
}

// RPCAddress is the address TaskManagers connect to.
func (jm *JobManager) RPCAddress() string { return jm.rpcLis.Addr().String() }

// RESTURL is the REST API's base URL, "" without one.
func (jm *JobManager) RESTURL() string {
	if jm.restLis == nil {
		return ""
	}
	return "http://" + jm.restLis.Addr().String()
}

func (jm *JobManager) logf(format string, args ...any) {
	fmt.Fprintf(jm.opts.Log, "jobmanager: "+format+"\n", args...)
}

// notifyLocked wakes what waits for slots or a job's change.
func (jm *JobManager) notifyLocked() {
	close(jm.changed)
	jm.changed = make(chan struct{})
}

// Run serves TaskManagers and the REST API, campaigns for leadership and,
// once it leads, runs the jobs the HA store holds and those submitted. It
// returns when ctx ends (nil) or the leadership is lost (an error: the
// process must exit, a standby takes over).
func (jm *JobManager) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jm.mu.Lock()
	jm.ctx = ctx
	jm.mu.Unlock()
	jm.grpc = grpc.NewServer(grpc.MaxRecvMsgSize(rpc.MaxMessage))
	jm.grpc.RegisterService(&rpc.ServiceDesc, jm)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		jm.grpc.Serve(jm.rpcLis)
	}()
	if jm.restLis != nil {
		var h http.Handler
		if jm.opts.Handler != nil {
			h = jm.opts.Handler(jm)
		} else {
			h = rest.NewHandler(jm, rest.HandlerOptions{Token: jm.opts.RESTToken})
		}
		jm.http = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			jm.http.Serve(jm.restLis)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		jm.watchHeartbeats(ctx)
	}()
	defer func() {
		cancel()
		if jm.http != nil {
			jm.http.Close()
		}
		jm.grpc.Stop()
		wg.Wait()
		jm.waitJobs()
		jm.mu.Lock()
		jm.closing = true
		jm.mu.Unlock()
		jm.bg.Wait()
		if jm.ownHA {
			jm.opts.HA.Close()
		}
	}()
	announce := jm.RPCAddress()
	if u := jm.RESTURL(); u != "" {
		announce += " " + u
	}
	l, err := jm.opts.HA.Campaign(ctx, announce)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("jobmanager: campaign: %w", err)
	}
	jm.logf("leading at epoch %d", l.Epoch)
	jm.mu.Lock()
	jm.leading, jm.lead = true, l
	jm.notifyLocked()
	jm.mu.Unlock()
	if err := jm.recover(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		jm.mu.Lock()
		jm.leading = false
		jm.mu.Unlock()
		return nil
	case <-l.Lost:
		jm.mu.Lock()
		jm.leading = false
		jm.notifyLocked()
		jm.mu.Unlock()
		return fmt.Errorf("jobmanager: lost the leadership of epoch %d", l.Epoch)
	}
}

// recover restarts the jobs the HA store holds (a JobManager that takes
// over), each from its latest checkpoint.
func (jm *JobManager) recover(ctx context.Context) error {
	jobs, err := jm.opts.HA.Jobs(ctx)
	if err != nil {
		return fmt.Errorf("jobmanager: recover jobs: %w", err)
	}
	for _, h := range jobs {
		var s spec
		if err := json.Unmarshal(h.Spec, &s); err != nil {
			return fmt.Errorf("jobmanager: recover job %s: %w", h.ID, err)
		}
		jm.logf("recovering job %s (%s)", h.ID, h.Name)
		jm.start(&job{id: h.ID, incarnation: h.Incarnation, name: h.Name, args: s.Args, slots: s.Slots, submitted: h.Submitted,
			spreads: jm.spreads(s.Args)})
	}
	return nil
}

// spreads reports whether the program may spread job args over several
// TaskManagers (cluster.Spreader).
func (jm *JobManager) spreads(args []string) bool {
	sp, ok := jm.opts.Program.(cluster.Spreader)
	return ok && sp.Spreads(args)
}

// spec is what the HA store keeps of a job to restart it.
type spec struct {
	Args  []string `json:"args"`
	Slots int      `json:"slots"`
}

// epoch returns the leadership's epoch, or an error when this JobManager
// does not lead.
func (jm *JobManager) epochLocked() (int64, error) {
	if !jm.leading {
		return 0, rest.ErrNotLeader
	}
	select {
	case <-jm.lead.Lost:
		return 0, rest.ErrNotLeader
	default:
	}
	return jm.lead.Epoch, nil
}

func newID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Submit checks the submission with the program, stores the job in the HA
// store and starts it.
func (jm *JobManager) Submit(ctx context.Context, s rest.Submission) (string, error) {
	name, slots, err := jm.opts.Program.Check(s.Args)
	if err != nil {
		return "", fmt.Errorf("jobmanager: submit: %w", err)
	}
	jm.mu.Lock()
	epoch, err := jm.epochLocked()
	jm.mu.Unlock()
	if err != nil {
		return "", err
	}
	j := &job{id: newID(16), incarnation: newID(8), name: name, args: s.Args, slots: slots,
		submitted: jm.opts.Clock.Now().UnixMilli(), spreads: jm.spreads(s.Args)}
	b, err := json.Marshal(spec{Args: s.Args, Slots: slots})
	if err != nil {
		return "", err
	}
	if err := jm.opts.HA.PutJob(ctx, epoch, ha.Job{ID: j.id, Incarnation: j.incarnation, Name: name, Spec: b, Submitted: j.submitted}); err != nil {
		return "", fmt.Errorf("jobmanager: submit: %w", err)
	}
	jm.logf("job %s (%s) submitted: %s", j.id, name, strings.Join(s.Args, " "))
	jm.start(j)
	return j.id, nil
}

// sortedTMs returns the TaskManagers by id.
func (jm *JobManager) sortedTMsLocked() []*taskManager {
	tms := make([]*taskManager, 0, len(jm.tms))
	for _, tm := range jm.tms {
		tms = append(tms, tm)
	}
	sort.Slice(tms, func(a, b int) bool { return tms[a].id < tms[b].id })
	return tms
}

// Run is New and then Run: the entry point of a program that takes the
// JobManager's role.
func Run(ctx context.Context, opts Options) error {
	jm, err := New(opts)
	if err != nil {
		return err
	}
	return jm.Run(ctx)
}
