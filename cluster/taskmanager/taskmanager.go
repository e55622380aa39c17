package taskmanager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/ha"
	"github.com/weirdata/weir/cluster/internal/rpc"
	"github.com/weirdata/weir/cluster/shuffle"
)

// Options configure a TaskManager.
type Options struct {
	// Program runs the jobs deployed.
	Program cluster.Program
	// JobManager is the JobManager's RPC address (host:port); with HA
	// instead, the TaskManager connects to the leader the store names.
	JobManager string
	HA         ha.Store
	// ID names the TaskManager (default: host-pid); Address is shown as
	// its path in the REST API (default: the address its connection to
	// the JobManager comes from).
	ID      string
	Address string
	// Slots is how many slots it offers (default 1).
	Slots int
	// Memory is its memory budget in bytes (0: none), shown in the REST
	// API as its managed memory.
	Memory int64
	// HeartbeatInterval is how often it sends a heartbeat (1 s); Timeout
	// how long it waits for the JobManager's messages before it takes it
	// for lost (5 s, or what the JobManager says when it accepts).
	HeartbeatInterval time.Duration
	Timeout           time.Duration
	// Stdout and Stderr are the jobs'.
	Stdout, Stderr io.Writer
	// Log, when set, receives a line per event.
	Log io.Writer
	// Fingerprint is the build it registers with; zero is the binary's
	// own (cluster.Own).
	Fingerprint cluster.Fingerprint
	// DataAddress, when set, is where its shuffle server listens
	// (host:port, port 0 picks one) for the shares of spread attempts it
	// takes; it registers the address it listens on, so the host must be
	// one the other TaskManagers reach (a pod's IP, not 0.0.0.0). Empty:
	// it takes no share of a spread attempt.
	DataAddress string
	// Shuffle sets its shuffle's heartbeats (zero: shuffle's defaults).
	Shuffle shuffle.Options
}

// TaskManager runs the attempts its JobManager deploys in its slots.
type TaskManager struct {
	opts Options
	fp   cluster.Fingerprint

	mu          sync.Mutex
	epoch       int64 // the largest leader epoch seen
	conn        *grpc.ClientConn
	out         chan *rpc.FromTM // the current session's, nil between sessions
	timeout     time.Duration
	lastContact time.Time
	deps        map[string]*deployment // by job id

	// the data plane, when Options.DataAddress is set: dataAddr is the
	// address its shuffle server listens on
	dataAddr string
	shufSrv  *shuffle.Server
	shufCl   *shuffle.Client
}

// deployment is an attempt running in the TaskManager.
type deployment struct {
	d       rpc.Deploy
	epoch   int64
	cancel  context.CancelFunc
	done    chan struct{}
	control cluster.Control
}

// fatalError ends Run: the JobManager refused the TaskManager for good.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// Run connects to the JobManager (again whenever the connection breaks)
// and runs what it deploys until ctx ends (nil) or the JobManager refuses
// this TaskManager's build (an error naming both fingerprints).
func Run(ctx context.Context, opts Options) error {
	if opts.Program == nil {
		return errors.New("taskmanager: no program")
	}
	if opts.JobManager == "" && opts.HA == nil {
		return errors.New("taskmanager: no JobManager address and no HA store to find the leader in")
	}
	if opts.Slots <= 0 {
		opts.Slots = 1
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.ID == "" {
		host, _ := os.Hostname()
		opts.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	for _, w := range []*io.Writer{&opts.Stdout, &opts.Stderr, &opts.Log} {
		if *w == nil {
			*w = io.Discard
		}
	}
	fp := opts.Fingerprint
	if fp == (cluster.Fingerprint{}) {
		var err error
		if fp, err = cluster.Own(); err != nil {
			return fmt.Errorf("taskmanager: %w", err)
		}
	}
	tm := &TaskManager{opts: opts, fp: fp, timeout: opts.Timeout, lastContact: time.Now(), deps: map[string]*deployment{}}
	if opts.DataAddress != "" {
		stop, err := tm.serveData()
		if err != nil {
			return err
		}
		defer stop()
	}
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tm.watchContact(wctx)
	}()
	defer func() {
		stopWatch()
		<-watched
		tm.cancelAll("the TaskManager stops")
	}()
	for ctx.Err() == nil {
		err := tm.session(ctx)
		var fe *fatalError
		if errors.As(err, &fe) {
			return fe.err
		}
		if ctx.Err() != nil {
			break
		}
		tm.logf("connection to the JobManager ended: %v; connecting again", err)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// serveData starts the shuffle server on Options.DataAddress and the
// client; stop ends both.
func (tm *TaskManager) serveData() (stop func(), err error) {
	host, _, err := net.SplitHostPort(tm.opts.DataAddress)
	if err != nil {
		return nil, fmt.Errorf("taskmanager: data address %q: %w", tm.opts.DataAddress, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return nil, fmt.Errorf("taskmanager: data address %q: give a host the other TaskManagers reach, not an unspecified one", tm.opts.DataAddress)
	}
	lis, err := net.Listen("tcp", tm.opts.DataAddress)
	if err != nil {
		return nil, fmt.Errorf("taskmanager: data address: %w", err)
	}
	so := tm.opts.Shuffle
	if so.Name == "" {
		so.Name = "TaskManager " + tm.opts.ID
	}
	tm.shufSrv, tm.shufCl = shuffle.NewServer(so), shuffle.NewClient(so)
	gs := grpc.NewServer(shuffle.ServerOptions(so)...)
	tm.shufSrv.Register(gs)
	tm.dataAddr = lis.Addr().String()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = gs.Serve(lis)
	}()
	tm.logf("data plane listening on %s", tm.dataAddr)
	return func() {
		tm.shufCl.Close()
		gs.Stop()
		<-served
	}, nil
}

func (tm *TaskManager) logf(format string, args ...any) {
	fmt.Fprintf(tm.opts.Log, "taskmanager %s: "+format+"\n", append([]any{tm.opts.ID}, args...)...)
}

// watchContact cancels the running attempts once the JobManager was not
// heard from for longer than the timeout: a partitioned TaskManager must
// not go on committing.
func (tm *TaskManager) watchContact(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		tm.mu.Lock()
		silent, timeout, n := time.Since(tm.lastContact), tm.timeout, len(tm.deps)
		tm.mu.Unlock()
		if n > 0 && silent > timeout {
			tm.cancelAll(fmt.Sprintf("the JobManager was not heard from for %v", silent.Round(time.Millisecond)))
		}
	}
}

// cancelAll cancels every running attempt and waits for them to end.
func (tm *TaskManager) cancelAll(why string) {
	tm.mu.Lock()
	deps := tm.deps
	tm.deps = map[string]*deployment{}
	tm.mu.Unlock()
	for _, d := range deps {
		tm.logf("canceling job %s attempt %s: %s", d.d.JobID, d.d.Attempt, why)
		d.cancel()
	}
	for _, d := range deps {
		<-d.done
	}
}

// leader returns the JobManager's RPC address to connect to.
func (tm *TaskManager) leader(ctx context.Context) (string, error) {
	if tm.opts.HA == nil {
		return tm.opts.JobManager, nil
	}
	l, err := tm.opts.HA.Leader(ctx)
	if err != nil {
		return "", fmt.Errorf("taskmanager: find the leader: %w", err)
	}
	addr, _, _ := strings.Cut(l.Address, " ")
	return addr, nil
}

// session connects to the JobManager, registers and serves its messages
// until the stream breaks or the JobManager goes silent.
func (tm *TaskManager) session(ctx context.Context) error {
	addr, err := tm.leader(ctx)
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("taskmanager: %s: %w", addr, err)
	}
	defer conn.Close()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// a JobManager that does not answer the connection and the registration
	// in time is given up: a paused one accepts TCP connections and says
	// nothing, and gRPC would wait for its handshake for 20 s
	tm.mu.Lock()
	regTimer := time.AfterFunc(tm.timeout, cancel)
	tm.mu.Unlock()
	defer regTimer.Stop()
	stream, err := rpc.Connect(sctx, conn)
	if err != nil {
		return fmt.Errorf("taskmanager: connect to %s: %w", addr, err)
	}
	reg := &rpc.FromTM{Register: &rpc.Register{ID: tm.opts.ID, Address: tm.opts.Address, Slots: tm.opts.Slots, Fingerprint: tm.fp,
		CPUCores: runtime.NumCPU(), Memory: tm.opts.Memory, DataAddress: tm.dataAddr}}
	if err := stream.SendMsg(reg); err != nil {
		return fmt.Errorf("taskmanager: register with %s: %w", addr, err)
	}
	var first rpc.ToTM
	if err := stream.RecvMsg(&first); err != nil {
		return fmt.Errorf("taskmanager: register with %s: %w", addr, err)
	}
	if !regTimer.Stop() {
		return fmt.Errorf("taskmanager: the JobManager at %s did not answer the registration in time", addr)
	}
	if first.Refused != "" {
		if why, ok := strings.CutPrefix(first.Refused, cluster.ErrFingerprint.Error()+": "); ok {
			return &fatalError{fmt.Errorf("taskmanager: the JobManager at %s refused this TaskManager: %w: %s", addr, cluster.ErrFingerprint, why)}
		}
		return fmt.Errorf("taskmanager: the JobManager at %s refused this TaskManager: %s", addr, first.Refused)
	}
	if first.Accepted == nil {
		return fmt.Errorf("taskmanager: the JobManager at %s answered the registration with %+v", addr, first)
	}
	// Attempts from before this session belong to a JobManager that
	// declared this TaskManager lost, or to an older leader: they end.
	tm.cancelAll("a new session with the JobManager began")
	out := make(chan *rpc.FromTM, 256)
	tm.mu.Lock()
	if first.Epoch < tm.epoch {
		tm.mu.Unlock()
		return fmt.Errorf("taskmanager: the JobManager at %s leads at epoch %d, older than %d seen", addr, first.Epoch, tm.epoch)
	}
	tm.epoch, tm.conn, tm.out, tm.lastContact = first.Epoch, conn, out, time.Now()
	if t := time.Duration(first.Accepted.TimeoutMillis) * time.Millisecond; t > 0 {
		tm.timeout = t
	}
	timeout := tm.timeout
	tm.mu.Unlock()
	tm.logf("registered with the JobManager at %s (epoch %d), %d slots", addr, first.Epoch, tm.opts.Slots)
	defer func() {
		tm.mu.Lock()
		if tm.out == out {
			tm.conn, tm.out = nil, nil
		}
		tm.mu.Unlock()
	}()

	sendErr := make(chan error, 1)
	go func() {
		tick := time.NewTicker(tm.opts.HeartbeatInterval)
		defer tick.Stop()
		for {
			var m *rpc.FromTM
			select {
			case <-sctx.Done():
				sendErr <- sctx.Err()
				return
			case <-tick.C:
				m = &rpc.FromTM{Heartbeat: true}
			case m = <-out:
			}
			ms := []*rpc.FromTM{m}
			if m.Heartbeat {
				ms = append(ms, tm.reports()...)
			}
			for _, m := range ms {
				if err := stream.SendMsg(m); err != nil {
					sendErr <- err
					cancel()
					return
				}
			}
		}
	}()
	heard := make(chan struct{}, 1)
	go func() { // the JobManager's silence past the timeout ends the session
		t := time.NewTimer(timeout)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-heard:
				t.Reset(timeout)
			case <-t.C:
				// The attempts end before the connection closes: none
				// fails on a gate the closing connection broke.
				tm.logf("the JobManager at %s was silent for %v", addr, timeout)
				tm.cancelAll(fmt.Sprintf("the JobManager was not heard from for %v", timeout))
				cancel()
				return
			}
		}
	}()
	for {
		var m rpc.ToTM
		if err := stream.RecvMsg(&m); err != nil {
			cancel()
			<-sendErr
			return err
		}
		select {
		case heard <- struct{}{}:
		default:
		}
		tm.handle(ctx, &m)
	}
}

// handle serves a JobManager's message, refusing one of an epoch older
// than the largest seen.
func (tm *TaskManager) handle(ctx context.Context, m *rpc.ToTM) {
	tm.mu.Lock()
	if m.Epoch < tm.epoch {
		tm.mu.Unlock()
		tm.logf("refused a message of epoch %d: the leader's epoch is %d", m.Epoch, tm.epoch)
		return
	}
	tm.epoch, tm.lastContact = m.Epoch, time.Now()
	tm.mu.Unlock()
	switch {
	case m.Deploy != nil:
		tm.deploy(ctx, *m.Deploy, m.Epoch)
	case m.Cancel != nil:
		tm.mu.Lock()
		d := tm.deps[m.Cancel.JobID]
		tm.mu.Unlock()
		if d != nil && d.d.Attempt == m.Cancel.Attempt {
			tm.logf("canceling job %s attempt %s", d.d.JobID, d.d.Attempt)
			d.cancel()
		}
	case m.Savepoint != nil:
		tm.savepoint(ctx, *m.Savepoint)
	}
}

// send queues a message for the current session; between sessions it is
// dropped (the JobManager took this TaskManager's attempts for lost).
func (tm *TaskManager) send(m *rpc.FromTM) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.out == nil {
		return
	}
	select {
	case tm.out <- m:
	default:
	}
}

// reports are the Reports of the running attempts that started.
func (tm *TaskManager) reports() []*rpc.FromTM {
	tm.mu.Lock()
	var deps []*deployment
	for _, d := range tm.deps {
		if d.control != nil {
			deps = append(deps, d)
		}
	}
	tm.mu.Unlock()
	out := make([]*rpc.FromTM, 0, len(deps))
	for _, d := range deps {
		out = append(out, &rpc.FromTM{Report: &rpc.Report{JobID: d.d.JobID, Attempt: d.d.Attempt, Data: d.control.Report()}})
	}
	return out
}

// deploy starts an attempt.
func (tm *TaskManager) deploy(ctx context.Context, d rpc.Deploy, epoch int64) {
	dctx, cancel := context.WithCancel(ctx)
	dep := &deployment{d: d, epoch: epoch, cancel: cancel, done: make(chan struct{})}
	tm.mu.Lock()
	old := tm.deps[d.JobID]
	tm.deps[d.JobID] = dep
	tm.mu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
	}
	tm.logf("running job %s attempt %s with %d slots, restoring %q", d.JobID, d.Attempt, d.Slots, d.Restore)
	out := &capture{max: cluster.MaxStdout}
	env := cluster.Env{JobID: d.JobID, Attempt: d.Attempt, CheckpointDir: d.CheckpointDir, Restore: d.Restore, Slots: d.Slots,
		Stdout: io.MultiWriter(tm.opts.Stdout, out), Stderr: tm.opts.Stderr,
		Gate: func(ctx context.Context, id int64, path string) error { return tm.gate(ctx, dep, id, path) },
		Started: func(c cluster.Control) {
			tm.mu.Lock()
			dep.control = c
			tm.mu.Unlock()
			tm.send(&rpc.FromTM{Status: &rpc.Status{JobID: d.JobID, Attempt: d.Attempt, State: rpc.Running, Vertices: c.Vertices()}})
		}}
	var spreadErr error
	if s := d.Spread; s != nil {
		if tm.shufSrv == nil {
			spreadErr = fmt.Errorf("taskmanager %s: a share of a spread attempt, but no data address (--data-address)", tm.opts.ID)
		} else {
			env.Spread = &cluster.Spread{Part: s.Part, Slots: s.Slots, Addrs: s.Addrs, Channels: d.JobID + "/" + d.Attempt,
				Client: tm.shufCl, Server: tm.shufSrv}
			tm.logf("job %s attempt %s: share %d of %d, slots %v", d.JobID, d.Attempt, s.Part, len(s.Slots), s.Slots)
		}
	}
	go func() {
		defer close(dep.done)
		err := spreadErr
		if err == nil {
			err = tm.opts.Program.Run(dctx, d.Args, env)
		}
		st := &rpc.Status{JobID: d.JobID, Attempt: d.Attempt, State: rpc.Finished}
		switch {
		case err != nil && dctx.Err() != nil:
			st.State = rpc.Canceled
		case err != nil:
			var u interface{ Unrecoverable() bool }
			st.State, st.Error, st.Unrecoverable = rpc.Failed, err.Error(), errors.As(err, &u) && u.Unrecoverable()
		}
		cancel()
		tm.mu.Lock()
		if tm.deps[d.JobID] == dep {
			delete(tm.deps, d.JobID)
		}
		c := dep.control
		tm.mu.Unlock()
		if c != nil {
			st.Report = c.Report()
		}
		if st.State == rpc.Finished {
			st.Stdout, st.StdoutDropped = out.bytes()
		}
		tm.logf("job %s attempt %s %s %s", d.JobID, d.Attempt, st.State, st.Error)
		tm.send(&rpc.FromTM{Status: st})
	}()
}

// gate asks the JobManager to record a checkpoint of dep; it fails when
// this TaskManager is not connected or the JobManager refuses.
func (tm *TaskManager) gate(ctx context.Context, dep *deployment, id int64, path string) error {
	tm.mu.Lock()
	conn, timeout := tm.conn, tm.timeout
	tm.mu.Unlock()
	if conn == nil {
		return fmt.Errorf("taskmanager: checkpoint %d: not connected to the JobManager", id)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := rpc.Gate(ctx, conn, &rpc.GateRequest{JobID: dep.d.JobID, Attempt: dep.d.Attempt, Epoch: dep.epoch, Checkpoint: id, Path: path})
	if err != nil {
		return fmt.Errorf("taskmanager: checkpoint %d: %w", id, err)
	}
	return nil
}

// savepoint takes a savepoint of the attempt the request names.
func (tm *TaskManager) savepoint(ctx context.Context, s rpc.Savepoint) {
	tm.mu.Lock()
	d := tm.deps[s.JobID]
	var c cluster.Control
	if d != nil && d.d.Attempt == s.Attempt {
		c = d.control
	}
	tm.mu.Unlock()
	done := &rpc.SavepointDone{JobID: s.JobID, Trigger: s.Trigger}
	if c == nil {
		done.Error = fmt.Sprintf("taskmanager: job %s attempt %s is not running here", s.JobID, s.Attempt)
		tm.send(&rpc.FromTM{SavepointDone: done})
		return
	}
	go func() {
		path, err := c.Savepoint(ctx, s.Dir, s.Stop)
		done.Path = path
		if err != nil {
			done.Error = err.Error()
		}
		tm.send(&rpc.FromTM{SavepointDone: done})
	}()
}

// capture keeps the first max bytes written to it and counts the rest;
// an attempt's goroutines write to it at once.
type capture struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(p), c.max-len(c.buf))
	c.buf = append(c.buf, p[:n]...)
	c.dropped += int64(len(p) - n)
	return len(p), nil
}

// bytes returns what c kept and the count of bytes it dropped.
func (c *capture) bytes() ([]byte, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf, c.dropped
}
