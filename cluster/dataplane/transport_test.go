package dataplane

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weirdata/weir/cluster/shuffle"
	"github.com/weirdata/weir/cluster/shuffle/shuffletest"
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rec is a record of the test job: its source subtask and sequence number
// there, a key, a value and a name that is sometimes far larger than a
// batch of the others.
type rec struct {
	Src, Seq int64
	Key, Val int64
	Name     string
}

type sum struct{ Key, Sum int64 }

// The test job's vertices, in the order they are added.
const (
	vSource = iota
	vSum
	vSink
)

const (
	sourceP, sumP   = 4, 3
	watermarkEvery  = 100
	bigEvery, bigSz = 997, 64 << 10
)

// record returns record seq of source subtask src: half the keys are 0
// (skew), the rest spread.
func record(src, seq int) rec {
	r := rec{Src: int64(src), Seq: int64(seq), Key: int64(seq*7+src) % 41, Val: int64(seq*3 + src)}
	if seq%2 == 0 {
		r.Key = 0
	}
	r.Name = fmt.Sprintf("r%d-%d", src, seq)
	if seq%bigEvery == 0 {
		r.Name = strings.Repeat("x", bigSz)
	}
	return r
}

// oracle is the job's answer computed naively: the sum of the values of
// each key, times copies (the consumers of a Broadcast edge).
func oracle(n, copies int) map[int64]int64 {
	want := map[int64]int64{}
	for src := range sourceP {
		for seq := range n {
			r := record(src, seq)
			want[r.Key] += r.Val * int64(copies)
		}
	}
	return want
}

// collector gathers the sink's sums from every process.
type collector struct {
	mu   sync.Mutex
	sums map[int64]int64
	// emitted counts the sums emitted per key: one per key where a key
	// goes to one consumer (HASH, RANGE)
	emitted map[int64]int
	// watermarks counts the watermarks each sum subtask saw
	watermarks int
	// spilled counts the bytes the two processes spilled
	spilled int64
}

func (c *collector) add(s []sum) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.emitted == nil {
		c.emitted = map[int64]int{}
	}
	for _, v := range s {
		c.sums[v.Key] += v.Sum
		c.emitted[v.Key]++
	}
}

// build adds the test job to g: a source of n records per subtask that
// sends a watermark after every watermarkEvery records (on a pipelined
// edge), a sum per key over strategy and mode, and a sink over FORWARD.
func build(t *testing.T, g *flow.Graph, n int, strategy flow.ShipStrategy, mode flow.ExchangeMode, out *collector) {
	recCodec, err := memory.NewCodec[rec]()
	if err != nil {
		t.Fatal(err)
	}
	sumCodec, err := memory.NewCodec[sum]()
	if err != nil {
		t.Fatal(err)
	}
	src := g.Vertex("source", sourceP, func(tc *flow.TaskContext) error {
		w := flow.Output[rec](tc, 0)
		for seq := range n {
			r := record(tc.Subtask, seq)
			if err := w.Emit(&r); err != nil {
				return err
			}
			if mode == flow.Pipelined && strategy != flow.Range && (seq+1)%watermarkEvery == 0 {
				if err := w.Event(flow.Event{Kind: flow.Watermark, Value: int64(seq)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	agg := g.Vertex("sum", sumP, func(tc *flow.TaskContext) error {
		r := flow.Input[rec](tc, 0)
		w := flow.Output[sum](tc, 0)
		sums := map[int64]int64{}
		wm := make([]int64, sourceP) // per source, the last watermark
		for i := range wm {
			wm[i] = -1
		}
		seen := 0
		for {
			b, ev, err := r.NextOrEvent(tc.Context())
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if ev != nil {
				if ev.Kind != flow.Watermark || ev.Value <= wm[ev.Source] {
					return fmt.Errorf("event %+v after watermark %d", *ev, wm[ev.Source])
				}
				wm[ev.Source] = ev.Value
				seen++
				continue
			}
			for _, v := range b {
				// in band: a record comes after the watermarks its source sent before it
				if v.Seq <= wm[v.Src] {
					return fmt.Errorf("record %d of source %d after watermark %d", v.Seq, v.Src, wm[v.Src])
				}
				if want := record(int(v.Src), int(v.Seq)); v != want {
					return fmt.Errorf("record %d of source %d changed on its way: %.40v", v.Seq, v.Src, v)
				}
				sums[v.Key] += v.Val
			}
		}
		out.mu.Lock()
		out.watermarks += seen
		out.mu.Unlock()
		for _, k := range sortedKeys(sums) {
			if err := w.Emit(&sum{Key: k, Sum: sums[k]}); err != nil {
				return err
			}
		}
		return nil
	})
	sink := g.Vertex("sink", sumP, func(tc *flow.TaskContext) error {
		r := flow.Input[sum](tc, 0)
		for {
			b, err := r.Next(tc.Context())
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			out.add(b)
		}
	})
	part := flow.Partitioner[rec]{Strategy: strategy}
	switch strategy {
	case flow.Hash:
		part.Hash = func(v *rec) uint64 { return uint64(v.Key) * 0x9E3779B97F4A7C15 }
	case flow.Range:
		// no Bounds: the producers sample the keys, across processes
		part.Key = func(dst []byte, v *rec) []byte { return binary.BigEndian.AppendUint64(dst, uint64(v.Key)) }
	}
	flow.Connect(g, src, agg, part, mode, recCodec)
	flow.Connect(g, agg, sink, flow.Partitioner[sum]{Strategy: flow.Forward}, flow.Pipelined, sumCodec)
}

func sortedKeys(m map[int64]int64) []int64 {
	ks := make([]int64, 0, len(m))
	for k := range maps.Keys(m) {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// placement says which process (0 or 1) runs each subtask: the two
// processes share every vertex, and the FORWARD edge's subtasks i sit in
// different processes for some i.
var placement = [][]int{
	vSource: {0, 1, 0, 1},
	vSum:    {0, 0, 1},
	vSink:   {1, 0, 1},
}

var opts = shuffle.Options{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 2 * time.Second}

// startProc starts a test process's shuffle peer.
func startProc(t *testing.T, name string) *shuffletest.Peer {
	t.Helper()
	o := opts
	o.Name = name
	return shuffletest.Start(t, o)
}

// runSplit runs the test job in two processes (two flow jobs of this test
// process, each with its own shuffle Server and Client) and returns each
// one's error.
func runSplit(t *testing.T, ctx context.Context, n int, strategy flow.ShipStrategy, mode flow.ExchangeMode, fo flow.Options, out *collector) [2]error {
	jobs, _, err := twoJobs(t, ctx, fo, func(g *flow.Graph) { build(t, g, n, strategy, mode, out) })
	if err != nil {
		t.Fatal(err)
	}
	var errs [2]error
	for k, jb := range jobs {
		var res *flow.Result
		res, errs[k] = jb.Wait()
		if res != nil {
			for _, v := range res.Vertices {
				for _, st := range v.Subtasks {
					out.spilled += st.Spilled
				}
			}
		}
	}
	return errs
}

// TestSplitJob runs a job whose subtasks are split between two processes
// and compares its answer with the naive sums, across ship strategies,
// batch sizes, channel capacities and an empty input.
func TestSplitJob(t *testing.T) {
	cases := []struct {
		name     string
		n        int
		strategy flow.ShipStrategy
		mode     flow.ExchangeMode
		fo       flow.Options
		spills   bool // the case must spill
	}{
		{"hash", 5000, flow.Hash, flow.Pipelined, flow.Options{}, false},
		{"hash/tiny-batches/one-credit", 3000, flow.Hash, flow.Pipelined, flow.Options{BatchSize: 7, ChannelBuffers: 1}, false},
		{"hash/no-buffer-timeout", 3000, flow.Hash, flow.Pipelined, flow.Options{BufferTimeout: -1}, false},
		{"rebalance", 4000, flow.Rebalance, flow.Pipelined, flow.Options{BatchSize: 64}, false},
		{"broadcast", 2000, flow.Broadcast, flow.Pipelined, flow.Options{BatchSize: 50, ChannelBuffers: 1}, false},
		// the producers of both processes share their samples: one key
		// goes to one consumer wherever its producer runs
		{"range/sampled", 5000, flow.Range, flow.Pipelined, flow.Options{}, false},
		{"range/sampled/one-credit", 3000, flow.Range, flow.Pipelined, flow.Options{BatchSize: 7, ChannelBuffers: 1}, false},
		{"empty", 0, flow.Hash, flow.Pipelined, flow.Options{}, false},
		{"tiny-memory", 3000, flow.Hash, flow.Pipelined, flow.Options{Memory: 1 << 20, BatchSize: 16}, false},
		{"blocking/hash", 5000, flow.Hash, flow.Blocking, flow.Options{}, false},
		{"blocking/broadcast/one-credit", 2000, flow.Broadcast, flow.Blocking, flow.Options{BatchSize: 50, ChannelBuffers: 1}, false},
		{"blocking/empty", 0, flow.Rebalance, flow.Blocking, flow.Options{}, false},
		{"blocking/range/sampled", 5000, flow.Range, flow.Blocking, flow.Options{}, false},
		{"range/sampled/empty", 0, flow.Range, flow.Pipelined, flow.Options{}, false},
		// the producers' stores spill to their disk and are sent from there
		{"blocking/tiny-memory", 5000, flow.Hash, flow.Blocking, flow.Options{Memory: 1 << 20, BatchSize: 16}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			copies := 1
			if tc.strategy == flow.Broadcast {
				copies = sumP
			}
			out := &collector{sums: map[int64]int64{}}
			errs := runSplit(t, ctx, tc.n, tc.strategy, tc.mode, tc.fo, out)
			if err := errors.Join(errs[:]...); err != nil {
				t.Fatal(err)
			}
			if tc.spills && out.spilled == 0 {
				t.Fatal("nothing spilled")
			}
			want := oracle(tc.n, copies)
			if !maps.Equal(out.sums, want) {
				t.Fatalf("sums differ:\n got %v\nwant %v", out.sums, want)
			}
			if tc.strategy == flow.Hash || tc.strategy == flow.Range {
				for k, n := range out.emitted {
					if n != 1 {
						t.Fatalf("key %d reached %d sum subtasks, want 1", k, n)
					}
				}
			}
			// every sum subtask gets every source's watermarks
			w := sourceP * (tc.n / watermarkEvery) * sumP
			if tc.mode == flow.Blocking || tc.strategy == flow.Range {
				w = 0
			}
			if out.watermarks != w {
				t.Fatalf("%d watermarks reached the sums, want %d", out.watermarks, w)
			}
		})
	}
}

// TestSplitJobEqualsEmbedded runs the same job in one process and split
// in two: the answers are equal.
func TestSplitJobEqualsEmbedded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	one := &collector{sums: map[int64]int64{}}
	g := flow.NewGraph()
	build(t, g, 4000, flow.Hash, flow.Pipelined, one)
	if _, err := flow.Execute(ctx, g, flow.Options{}); err != nil {
		t.Fatal(err)
	}
	two := &collector{sums: map[int64]int64{}}
	if errs := runSplit(t, ctx, 4000, flow.Hash, flow.Pipelined, flow.Options{}, two); errors.Join(errs[:]...) != nil {
		err := errors.Join(errs[:]...)
		t.Fatal(err)
	}
	if !maps.Equal(one.sums, two.sums) || one.watermarks != two.watermarks {
		t.Fatalf("embedded %v (%d watermarks), split %v (%d)", one.sums, one.watermarks, two.sums, two.watermarks)
	}
}

// TestPeerLost stops one process's server while the job runs: the other
// fails with an error that names the lost peer, and neither hangs.
func TestPeerLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	release := make(chan struct{})
	recCodec, _ := memory.NewCodec[rec]()
	jobs, procs, err := twoJobs(t, ctx, flow.Options{}, func(g *flow.Graph) {
		src := g.Vertex("source", sourceP, func(tc *flow.TaskContext) error {
			w := flow.Output[rec](tc, 0)
			for seq := 0; ; seq++ {
				r := record(tc.Subtask, seq)
				if err := w.Emit(&r); err != nil {
					return err
				}
				if seq == 1000 && tc.Subtask == 1 { // in process 1 alone
					close(release)
				}
			}
		})
		sink := g.Vertex("sum", sumP, func(tc *flow.TaskContext) error {
			r := flow.Input[rec](tc, 0)
			for {
				if _, err := r.Next(tc.Context()); err != nil {
					return err
				}
			}
		})
		flow.Connect(g, src, sink, flow.Partitioner[rec]{Strategy: flow.Rebalance}, flow.Pipelined, recCodec)
		g.Vertex("sink", sumP, func(*flow.TaskContext) error { return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	<-release
	// process 1 dies: its server and client go, its job is canceled
	procs[1].Stop()
	jobs[1].Cancel()
	if _, err := jobs[1].Wait(); err == nil {
		t.Fatal("the canceled process's job ended without error")
	}
	_, err = jobs[0].Wait()
	if !errors.Is(err, shuffle.ErrBroken) {
		t.Fatalf("the surviving process's job ended with %v, want an error wrapping shuffle.ErrBroken", err)
	}
	t.Logf("survivor: %v", err)
}

// TestAlignedBarriersAcrossProcesses: sources in both processes send
// barrier k after their record k*every-1; the consumers align them with an
// Aligner, which blocks each channel that delivered the barrier. With one
// buffer per channel a blocked channel from the other process fills, its
// pump holds the next batch and blocks the channel on the shuffle inbox,
// and its producer stops: no record sent after a barrier may reach the
// consumer before that barrier is released, and every record arrives.
func TestAlignedBarriersAcrossProcesses(t *testing.T) {
	const n, every, barriers = 3000, 500, 5
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	seen := 0
	recCodec, err := memory.NewCodec[rec]()
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := twoJobs(t, ctx, flow.Options{BatchSize: 16, ChannelBuffers: 1}, func(g *flow.Graph) {
		src := g.Vertex("source", sourceP, func(tc *flow.TaskContext) error {
			w := flow.Output[rec](tc, 0)
			for seq := range n {
				r := record(tc.Subtask, seq)
				if err := w.Emit(&r); err != nil {
					return err
				}
				if (seq+1)%every == 0 && (seq+1)/every <= barriers {
					if err := w.Event(flow.Event{Kind: flow.Barrier, Value: int64((seq + 1) / every)}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		agg := g.Vertex("sum", sumP, func(tc *flow.TaskContext) error {
			a := flow.NewAligner(flow.Input[rec](tc, 0))
			released := int64(0) // the last barrier released
			count := 0
			for {
				b, ev, err := a.Next(tc.Context())
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				if ev != nil {
					if ev.Kind == flow.Barrier {
						if ev.Value != released+1 {
							return fmt.Errorf("barrier %d after %d", ev.Value, released)
						}
						released = ev.Value
					}
					continue
				}
				for _, v := range b {
					// a record past barrier k comes only after k was released
					if after := min((v.Seq)/every, barriers); after > released {
						return fmt.Errorf("record %d of source %d (past barrier %d) before barrier %d was released", v.Seq, v.Src, after, released+1)
					}
				}
				count += len(b)
			}
			if released != barriers {
				return fmt.Errorf("released %d barriers, want %d", released, barriers)
			}
			mu.Lock()
			seen += count
			mu.Unlock()
			return nil
		})
		flow.Connect(g, src, agg, flow.Partitioner[rec]{Strategy: flow.Rebalance}, flow.Pipelined, recCodec)
		g.Vertex("sink", sumP, func(*flow.TaskContext) error { return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, jb := range jobs {
		if _, err := jb.Wait(); err != nil {
			t.Fatalf("process %d: %v", k, err)
		}
	}
	if seen != sourceP*n {
		t.Fatalf("the consumers saw %d records, want %d", seen, sourceP*n)
	}
}

// twoJobs starts the graph each call of build makes in two processes (two
// flow jobs, each with its own shuffle server and client on loopback)
// with the test placement, and returns the jobs and the processes. When
// the second cannot start, the first is canceled and waited for.
func twoJobs(t *testing.T, ctx context.Context, fo flow.Options, build func(g *flow.Graph)) ([2]*flow.Job, [2]*shuffletest.Peer, error) {
	procs := [2]*shuffletest.Peer{startProc(t, "p0"), startProc(t, "p1")}
	addr := func(v, i int) string { return procs[placement[v][i]].Addr }
	var jobs [2]*flow.Job
	for k := range procs {
		g := flow.NewGraph()
		build(g)
		o := fo
		o.Remote = &flow.Remote{
			Here:      func(v, i int) bool { return placement[v][i] == k },
			Transport: &Transport{Job: "j1", Attempt: 1, Client: procs[k].Client, Server: procs[k].Server, Addr: addr},
		}
		jb, err := flow.Start(ctx, g, o)
		if err != nil {
			if k == 1 {
				jobs[0].Cancel()
				jobs[0].Wait()
			}
			return jobs, procs, err
		}
		jobs[k] = jb
	}
	return jobs, procs, nil
}

// TestStartRefusesRemoteEdges: an edge whose channels cross processes
// needs a codec.
func TestStartRefusesRemoteEdges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name  string
		part  flow.Partitioner[rec]
		codec *memory.Codec[rec]
		want  string
	}{
		{"no codec", flow.Partitioner[rec]{Strategy: flow.Rebalance}, nil, "crosses processes and has no codec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := twoJobs(t, ctx, flow.Options{}, func(g *flow.Graph) {
				src := g.Vertex("source", sourceP, func(*flow.TaskContext) error { return nil })
				dst := g.Vertex("sum", sumP, func(*flow.TaskContext) error { return nil })
				flow.Connect(g, src, dst, tc.part, flow.Pipelined, tc.codec)
				g.Vertex("sink", sumP, func(*flow.TaskContext) error { return nil })
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestConsumerEndsEarly: consumers that stop reading after their first
// batch drop the rest of what the producers in the other process send,
// over pipelined and blocking edges, and both processes finish.
func TestConsumerEndsEarly(t *testing.T) {
	for _, mode := range []flow.ExchangeMode{flow.Pipelined, flow.Blocking} {
		t.Run(mode.String(), func(t *testing.T) { consumerEndsEarly(t, mode) })
	}
}

func consumerEndsEarly(t *testing.T, mode flow.ExchangeMode) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	codec, _ := memory.NewCodec[rec]()
	var mu sync.Mutex
	first := 0
	jobs, _, err := twoJobs(t, ctx, flow.Options{BatchSize: 8, ChannelBuffers: 1}, func(g *flow.Graph) {
		src := g.Vertex("source", sourceP, func(tc *flow.TaskContext) error {
			w := flow.Output[rec](tc, 0)
			for seq := range 20000 {
				r := record(tc.Subtask, seq)
				if err := w.Emit(&r); err != nil {
					return err
				}
			}
			return nil
		})
		dst := g.Vertex("sum", sumP, func(tc *flow.TaskContext) error {
			b, err := flow.Input[rec](tc, 0).Next(tc.Context())
			if err != nil {
				return err
			}
			mu.Lock()
			first += len(b)
			mu.Unlock()
			return nil
		})
		flow.Connect(g, src, dst, flow.Partitioner[rec]{Strategy: flow.Rebalance}, mode, codec)
		g.Vertex("sink", sumP, func(*flow.TaskContext) error { return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, jb := range jobs {
		if _, err := jb.Wait(); err != nil {
			t.Fatalf("process %d: %v", k, err)
		}
	}
	if first == 0 {
		t.Fatal("no consumer read a batch")
	}
}

// TestBlockingForwardInEachProcess: a blocking FORWARD edge whose pairs
// all sit in one process each (no channel crosses) is read once the
// producers of each process finished, not the others'.
func TestBlockingForwardInEachProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	procs := [2]*shuffletest.Peer{startProc(t, "p0"), startProc(t, "p1")}
	codec, err := memory.NewCodec[rec]()
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	var mu sync.Mutex
	got := map[int64]int64{} // records per source subtask
	var jobs [2]*flow.Job
	for k := range procs {
		g := flow.NewGraph()
		src := g.Vertex("source", 2, func(tc *flow.TaskContext) error {
			w := flow.Output[rec](tc, 0)
			for seq := range n {
				r := record(tc.Subtask, seq)
				if err := w.Emit(&r); err != nil {
					return err
				}
			}
			return nil
		})
		sink := g.Vertex("sink", 2, func(tc *flow.TaskContext) error {
			var err error
			for b := range flow.Batches[rec](tc, 0, &err) {
				mu.Lock()
				for _, v := range b {
					if v.Src != int64(tc.Subtask) {
						mu.Unlock()
						return fmt.Errorf("sink %d got a record of source %d", tc.Subtask, v.Src)
					}
					got[v.Src]++
				}
				mu.Unlock()
			}
			return err
		})
		flow.Connect(g, src, sink, flow.Partitioner[rec]{Strategy: flow.Forward}, flow.Blocking, codec)
		jb, err := flow.Start(ctx, g, flow.Options{Remote: &flow.Remote{
			Here:      func(_, i int) bool { return i == k },
			Transport: &Transport{Job: "fwd", Attempt: 1, Client: procs[k].Client, Server: procs[k].Server, Addr: func(_, i int) string { return procs[i].Addr }},
		}})
		if err != nil {
			t.Fatal(err)
		}
		jobs[k] = jb
	}
	for _, jb := range jobs {
		if _, err := jb.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if want := map[int64]int64{0: n, 1: n}; !maps.Equal(got, want) {
		t.Fatalf("records per source %v, want %v", got, want)
	}
}
