package stream_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/dataplane"
	"github.com/weirdata/weir/cluster/shuffle"
	"github.com/weirdata/weir/cluster/shuffle/shuffletest"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// spreadEvent is an event of the spread jobs: key, event time, value.
type spreadEvent struct {
	K string
	T int64
	V int64
}

// spreadEvents returns n events: half of them of one key, the others of
// 13 keys; times out of order by up to 40 ms.
func spreadEvents(n int) []spreadEvent {
	evs := make([]spreadEvent, n)
	for i := range evs {
		k := "hot"
		if i%2 == 1 {
			k = "k" + strconv.Itoa(i%13)
		}
		evs[i] = spreadEvent{K: k, T: 1_000_000 + int64(i)*10 - int64(i*7%5)*10, V: int64(i % 1000)}
	}
	return evs
}

// spreadOracle returns the lines "key,window start,sum" of 1 s tumbling
// windows over evs, sorted: a naive sum per key and window.
func spreadOracle(evs []spreadEvent) []string {
	sums := map[string]int64{}
	for _, e := range evs {
		sums[e.K+","+strconv.FormatInt(e.T-e.T%1000, 10)] += e.V
	}
	var out []string
	for k, s := range sums {
		out = append(out, k+","+strconv.FormatInt(s, 10))
	}
	slices.Sort(out)
	return out
}

type spreadSum struct{}

func (spreadSum) CreateAccumulator() int64         { return 0 }
func (spreadSum) Add(e spreadEvent, a int64) int64 { return a + e.V }
func (spreadSum) GetResult(a int64) int64          { return a }
func (spreadSum) Merge(a, b int64) int64           { return a + b }

// spreadProgram sums evs per key in 1 s event-time windows and writes the
// lines "key,window start,sum" through a text FileSink into out.
// With slow, a rebalance to a map that sleeps 1 ms every 32 events comes
// first: backpressure across processes.
func spreadProgram(env *stream.Env, evs []spreadEvent, out string, slow ...bool) {
	strategy := watermark.ForBoundedOutOfOrderness[spreadEvent](50 * time.Millisecond).
		WithTimestampAssigner(func(e spreadEvent, _ int64) int64 { return e.T })
	src := stream.FromSource(env, source.FromSlice(evs, source.BatchSize(16)), strategy, "events").UID("events")
	if len(slow) > 0 && slow[0] {
		var n atomic.Int64 // over the subtasks of this process
		src = stream.Map(src.Rebalance(), func(e spreadEvent) spreadEvent {
			if n.Add(1)%32 == 0 {
				time.Sleep(time.Millisecond)
			}
			return e
		}).UID("slow")
	}
	ws := stream.Window(stream.KeyBy(src, func(e spreadEvent) string { return e.K }), window.TumblingEventTimeWindows(time.Second))
	lines := stream.WindowAggregateProcess(ws, spreadSum{}, func() stream.ProcessWindowFunction[string, window.TimeWindow, int64, string] {
		return stream.ProcessWindowFunction[string, window.TimeWindow, int64, string]{
			Process: func(key string, ctx *stream.WindowContext[string, window.TimeWindow], accs []int64, out stream.Collector[string]) error {
				for _, a := range accs {
					out.Collect(key + "," + strconv.FormatInt(ctx.Window().Start, 10) + "," + strconv.FormatInt(a, 10))
				}
				return nil
			},
		}
	}).UID("windows")
	stream.SinkTo(stream.Map(lines, func(s string) string { return s }).UID("format"), sink.Text(out))
}

// committed returns the lines of the committed files in dir, sorted, and
// fails on a hidden (in-progress or pending) file.
func committed(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("hidden file %s left", e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if s := strings.TrimRight(string(b), "\n"); s != "" {
			got = append(got, strings.Split(s, "\n")...)
		}
	}
	slices.Sort(got)
	return got
}

// spreadRun starts the parts of one run of a spread job over peers, each
// with its own checkpoint.Dir of ckDir; opts adds to each part's options.
type spreadRun struct {
	jobs   []*stream.Job
	stores []*checkpoint.Dir
}

var spreadRuns atomic.Int64

// spreadMode is how startSpread runs a job: with unaligned checkpoints
// (and a slow map), and starting its parts last first, 200 ms apart.
type spreadMode struct{ unaligned, reverse bool }

func startSpread(t *testing.T, peers []*shuffletest.Peer, slots []int, id string, ckDir string, evs []spreadEvent, out string,
	opts func(part int, o *stream.Options), mode ...spreadMode) *spreadRun {
	t.Helper()
	var m spreadMode
	if len(mode) > 0 {
		m = mode[0]
	}
	run := spreadRuns.Add(1) // each run's channels apart
	r := &spreadRun{jobs: make([]*stream.Job, len(slots)), stores: make([]*checkpoint.Dir, len(slots))}
	for i := range slots {
		k := i
		if m.reverse {
			k = len(slots) - 1 - i
			if i > 0 {
				time.Sleep(200 * time.Millisecond)
			}
		}
		sp := spreadPart(peers, k, slots, id, fmt.Sprintf("%s/%d", id, run))
		o := stream.Options{Parallelism: 3, Spread: sp, SourceRate: 20000, AutoWatermarkInterval: 20 * time.Millisecond}
		if opts != nil {
			opts(k, &o)
		}
		env := stream.New(o)
		store, err := checkpoint.OpenDir(ckDir, checkpoint.DirOptions{Follower: k != 0})
		if err != nil {
			t.Fatal(err)
		}
		r.stores[k] = store
		cfg := env.EnableCheckpointing(30 * time.Millisecond)
		cfg.Storage = store
		cfg.Unaligned = m.unaligned
		spreadProgram(env, evs, out, m.unaligned)
		r.start(t, k, env)
	}
	return r
}

// start starts env as part k of r; if it cannot, it cancels the parts
// started and fails t.
func (r *spreadRun) start(t *testing.T, k int, env *stream.Env) {
	t.Helper()
	j, err := env.Start(context.Background())
	if err != nil {
		for _, j := range r.jobs {
			if j != nil {
				j.Cancel()
			}
		}
		r.wait()
		t.Fatalf("part %d: %v", k, err)
	}
	for len(r.jobs) <= k {
		r.jobs = append(r.jobs, nil)
	}
	r.jobs[k] = j
}

// finish waits for every part and fails t unless all succeeded; what
// says which run it was ("" or " of the restored job").
func (r *spreadRun) finish(t *testing.T, what string) {
	t.Helper()
	for k, err := range r.wait() {
		if err != nil {
			t.Fatalf("part %d%s: %v", k, what, err)
		}
	}
}

// wait returns each part's error once all ended, and closes their
// checkpoint storages.
func (r *spreadRun) wait() []error {
	errs := make([]error, len(r.jobs))
	for k, j := range r.jobs {
		if j != nil {
			_, errs[k] = j.Wait()
		}
	}
	for _, s := range r.stores {
		if s != nil {
			_ = s.Close()
		}
	}
	return errs
}

// spreadPart is part k of job id spread over peers with slots, its
// channels named channels.
func spreadPart(peers []*shuffletest.Peer, k int, slots []int, id, channels string) *stream.Spread {
	return &stream.Spread{Part: k, Slots: slots, Job: id, Transport: func(part func(v, i int) int) (stream.Transport, error) {
		return &dataplane.Transport{Job: channels, Client: peers[k].Client, Server: peers[k].Server,
			Addr: func(v, i int) string { return peers[part(v, i)].Addr }}, nil
	}}
}

func spreadPeers(t *testing.T) []*shuffletest.Peer {
	return []*shuffletest.Peer{
		shuffletest.Start(t, shuffle.Options{Name: "p0", HeartbeatInterval: 100 * time.Millisecond}),
		shuffletest.Start(t, shuffle.Options{Name: "p1", HeartbeatInterval: 100 * time.Millisecond}),
	}
}

const spreadID = "0123456789abcdef0123456789abcdef"

// TestSpreadWindows runs a keyed window job spread over two processes
// (two parts in this test, slots 2 and 1, over cluster/dataplane) with
// checkpoints into a directory both open: it completes checkpoints, its
// sources take their splits from part 0's enumerator, and the files it
// commits hold the naive sums per key and window, each once. Part 1
// starts first, 200 ms before part 0: what it sends part 0 waits for it.
func TestSpreadWindows(t *testing.T) {
	evs := spreadEvents(30000)
	want := spreadOracle(evs)
	peers := spreadPeers(t)
	out, ck := t.TempDir(), t.TempDir()
	r := startSpread(t, peers, []int{2, 1}, spreadID, ck, evs, out, nil, spreadMode{reverse: true})
	r.finish(t, "")
	// each part read its own splits, handed out by part 0's enumerator
	var read []int64
	for _, j := range r.jobs {
		n := int64(0)
		for _, v := range j.Metrics() {
			for _, o := range v.Total().Operators {
				if o.Name == "events" {
					n += o.RecordsOut
				}
			}
		}
		read = append(read, n)
	}
	if read[0] == 0 || read[1] == 0 || read[0]+read[1] != int64(len(evs)) {
		t.Errorf("the parts' sources read %v records, want both some and %d in all", read, len(evs))
	}
	if id := r.jobs[1].ID(); id != spreadID {
		t.Errorf("part 1's job id %s, want %s", id, spreadID)
	}
	if n := len(r.jobs[0].Checkpoints().Completed); n == 0 {
		t.Error("part 0 completed no checkpoint")
	}
	if _, err := r.jobs[1].TriggerCheckpoint(context.Background()); err == nil || !strings.Contains(err.Error(), "part 0") {
		t.Errorf("part 1's TriggerCheckpoint: %v, want an error naming part 0", err)
	}
	if got := committed(t, out); !slices.Equal(got, want) {
		t.Fatalf("committed %d lines, want %d (first %q, want %q)", len(got), len(want), got[:min(3, len(got))], want[:3])
	}
}

// TestSpreadRestore cancels one part of a spread job after checkpoints
// completed, which ends the other part with a failure naming it; both
// parts then start again from the latest checkpoint (as a cluster would
// deploy them again) and run to the end: the committed lines are the naive
// sums, none lost and none twice. Canceling part 0, and a stop with a
// savepoint in part 0 followed by a restore from the savepoint, end the
// same.
func TestSpreadRestore(t *testing.T) {
	evs := spreadEvents(40000)
	want := spreadOracle(evs)
	for _, tc := range []string{"cancel part 1", "cancel part 0", "stop with savepoint"} {
		t.Run(tc, func(t *testing.T) {
			peers := spreadPeers(t)
			out, ck, sp := t.TempDir(), t.TempDir(), t.TempDir()
			r := startSpread(t, peers, []int{1, 2}, spreadID, ck, evs, out, nil)
			deadline := time.Now().Add(20 * time.Second)
			for len(r.jobs[0].Checkpoints().Completed) < 3 {
				if time.Now().After(deadline) {
					t.Fatal("no checkpoint completed in 20 s")
				}
				time.Sleep(5 * time.Millisecond)
			}
			var restore *checkpoint.Snapshot
			switch tc {
			case "cancel part 1":
				r.jobs[1].Cancel()
				errs := r.wait()
				if errs[0] == nil || !strings.Contains(errs[0].Error(), "part 1") {
					t.Fatalf("part 0 ended with %v, want a failure naming part 1", errs[0])
				}
				if errs[1] == nil {
					t.Fatal("part 1 ended without an error")
				}
			case "cancel part 0":
				r.jobs[0].Cancel()
				errs := r.wait()
				if errs[1] == nil || !strings.Contains(errs[1].Error(), "part 0") {
					t.Fatalf("part 1 ended with %v, want an error naming part 0", errs[1])
				}
			case "stop with savepoint":
				path, err := r.jobs[0].StopWithSavepoint(context.Background(), sp)
				if err != nil {
					t.Fatal(err)
				}
				r.finish(t, " after the stop")
				if st := r.jobs[1].Status(); st != stream.Finished {
					t.Fatalf("part 1 ended %v, want FINISHED", st)
				}
				if restore, err = checkpoint.Load(path); err != nil {
					t.Fatal(err)
				}
				if got := committed(t, out); len(got) >= len(want) {
					t.Fatalf("the stopped job committed %d of %d lines: make the input longer", len(got), len(want))
				}
			}
			var restored [2]atomic.Int64
			r = startSpread(t, peers, []int{1, 2}, spreadID, ck, evs, out, func(k int, o *stream.Options) {
				o.Restore = restore
				o.OnRestore = func(ri stream.RestoreInfo) { restored[k].Store(ri.ID) }
			})
			r.finish(t, " of the restored job")
			if a, b := restored[0].Load(), restored[1].Load(); a == 0 || a != b {
				t.Fatalf("the parts restored checkpoints %d and %d, want the same one", a, b)
			}
			if got := committed(t, out); !slices.Equal(got, want) {
				t.Fatalf("committed %d lines, want %d", len(got), len(want))
			}
		})
	}
}

// TestSpreadUnaligned runs a spread job under backpressure across the
// processes (a rebalance to a slow map) with unaligned checkpoints: some
// persist records in flight, whose barriers crossed processes as
// priority events; one part is canceled, both start again from the latest
// checkpoint (its channel state sent again first) and run to the end:
// the committed lines are the naive sums, none lost and none twice.
func TestSpreadUnaligned(t *testing.T) {
	evs := spreadEvents(30000)
	want := spreadOracle(evs)
	peers := spreadPeers(t)
	out, ck := t.TempDir(), t.TempDir()
	r := startSpread(t, peers, []int{2, 1}, spreadID, ck, evs, out, nil, spreadMode{unaligned: true})
	inflight := func() bool {
		for _, c := range r.jobs[0].Checkpoints().Completed {
			if c.InFlight > 0 {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(r.jobs[0].Checkpoints().Completed) < 3 || !inflight() {
		if time.Now().After(deadline) {
			t.Fatalf("in 20 s: %d checkpoints, in flight %v", len(r.jobs[0].Checkpoints().Completed), inflight())
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.jobs[1].Cancel()
	if errs := r.wait(); errs[0] == nil {
		t.Fatal("part 0 ended without an error")
	}
	r = startSpread(t, peers, []int{2, 1}, spreadID, ck, evs, out, nil, spreadMode{unaligned: true})
	r.finish(t, " of the restored job")
	if got := committed(t, out); !slices.Equal(got, want) {
		lost, dup := 0, 0
		count := map[string]int{}
		for _, l := range want {
			count[l]++
		}
		for _, l := range got {
			count[l]--
		}
		for _, c := range count {
			if c > 0 {
				lost += c
			} else {
				dup -= c
			}
		}
		t.Fatalf("committed %d lines, want %d: %d lost, %d extra", len(got), len(want), lost, dup)
	}
}

type spreadBranch struct{ Root, Depth int }

// TestSpreadIterate runs a loop spread over two processes, with
// checkpoints: every record below depth 6 feeds back two at the next
// depth through a rebalance inside the loop, so the loop's records cross
// processes while each subtask's feedback stays in its own. Every root
// comes out 2^6 times, the closed form.
func TestSpreadIterate(t *testing.T) {
	const roots, depth = 200, 6
	peers := spreadPeers(t)
	out, ck := t.TempDir(), t.TempDir()
	r := &spreadRun{}
	for k := range 2 {
		sp := spreadPart(peers, k, []int{1, 2}, spreadID, "iterate")
		env := stream.New(stream.Options{Parallelism: 3, Spread: sp, BatchSize: 8})
		store, err := checkpoint.OpenDir(ck, checkpoint.DirOptions{Follower: k != 0})
		if err != nil {
			t.Fatal(err)
		}
		r.stores = append(r.stores, store)
		env.EnableCheckpointing(20 * time.Millisecond).Storage = store
		var in []spreadBranch
		for r := range roots {
			in = append(in, spreadBranch{Root: r})
		}
		it := stream.Iterate(stream.FromSlice(env, in), 2*time.Second)
		again := stream.NewOutputTag[spreadBranch]("again")
		step := stream.Process(it.DataStream.Rebalance(), func() stream.ProcessFunction[spreadBranch, spreadBranch] {
			return stream.ProcessFunction[spreadBranch, spreadBranch]{
				ProcessElement: func(b spreadBranch, ctx *stream.Context, out stream.Collector[spreadBranch]) error {
					if b.Depth == depth {
						out.Collect(b)
						return nil
					}
					b.Depth++
					stream.Output(ctx, again, b)
					stream.Output(ctx, again, b)
					return nil
				},
			}
		}).UID("step")
		it.CloseWith(stream.GetSideOutput(step, again))
		stream.SinkTo(stream.Map(step, func(b spreadBranch) string { return strconv.Itoa(b.Root) }).UID("roots"), sink.Text(out))
		r.start(t, k, env)
	}
	r.finish(t, "")
	count := map[string]int{}
	for _, l := range committed(t, out) {
		count[l]++
	}
	if len(count) != roots {
		t.Fatalf("%d roots came out, want %d", len(count), roots)
	}
	for r, n := range count {
		if n != 1<<depth {
			t.Fatalf("root %s came out %d times, want %d", r, n, 1<<depth)
		}
	}
}

// TestSpreadBatch runs the window job spread over two processes in BATCH
// mode, with and without checkpointing configured (which BATCH mode does
// not take, but its sinks then commit with the final snapshot, in part
// 0): the committed lines are the naive sums.
func TestSpreadBatch(t *testing.T) {
	evs := spreadEvents(20000)
	want := spreadOracle(evs)
	for _, ck := range []bool{false, true} {
		t.Run(fmt.Sprint("checkpointing=", ck), func(t *testing.T) {
			peers := spreadPeers(t)
			out, dir := t.TempDir(), t.TempDir()
			r := &spreadRun{}
			for k := range 2 {
				sp := spreadPart(peers, k, []int{2, 1}, spreadID, fmt.Sprint("batch/", ck))
				env := stream.New(stream.Options{Parallelism: 3, Spread: sp, Mode: stream.Batch})
				if ck {
					store, err := checkpoint.OpenDir(dir, checkpoint.DirOptions{Follower: k != 0})
					if err != nil {
						t.Fatal(err)
					}
					r.stores = append(r.stores, store)
					env.EnableCheckpointing(time.Second).Storage = store
				}
				spreadProgram(env, evs, out)
				r.start(t, k, env)
			}
			r.finish(t, "")
			if got := committed(t, out); !slices.Equal(got, want) {
				t.Fatalf("committed %d lines, want %d", len(got), len(want))
			}
		})
	}
}

// TestSpreadRefuses: what a spread job cannot do is refused before it
// runs, with an error that says why.
func TestSpreadRefuses(t *testing.T) {
	transport := func(func(v, i int) int) (stream.Transport, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		opts func(*stream.Options, *stream.Spread)
		ck   func(*stream.CheckpointConfig)
		want string
	}{
		{"restart", func(o *stream.Options, _ *stream.Spread) { o.Restart = stream.FixedDelayRestart(3, time.Second) }, nil, "restart"},
		{"no id", func(_ *stream.Options, s *stream.Spread) { s.Job = "" }, nil, "id"},
		{"bad part", func(_ *stream.Options, s *stream.Spread) { s.Part = 2 }, nil, "part 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &stream.Spread{Part: 0, Slots: []int{1, 1}, Job: spreadID, Transport: transport}
			o := stream.Options{Parallelism: 2, Spread: sp}
			if tc.opts != nil {
				tc.opts(&o, sp)
			}
			env := stream.New(o)
			c := env.EnableCheckpointing(time.Second)
			if tc.ck != nil {
				tc.ck(c)
			}
			spreadProgram(env, spreadEvents(10), t.TempDir())
			_, err := env.Start(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start: %v, want an error about %q", err, tc.want)
			}
		})
	}
}
