package kafka

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// TestSourceBoundedReadsAll: a bounded job at parallelism 1, 2, 3 and 5
// reads every record of a 4-partition topic exactly once (the oracle: the
// records produced), and ends.
func TestSourceBoundedReadsAll(t *testing.T) {
	cfg := cluster(t, 4, "in")
	want := produceSpread(t, cfg, "in", "r", 4, 1000)
	for _, p := range []int{1, 2, 3, 5} {
		src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Bounded: true, BatchSize: 64})
		env := stream.New(stream.Options{Parallelism: p})
		out := stream.Collect(stream.FromSource(env, src, watermark.NoWatermarks[string](), "kafka"))
		if _, err := env.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := sameSet(out.Values(), want); err != nil {
			t.Errorf("parallelism %d: %v", p, err)
		}
	}
}

// readAll reads r to its end.
func readAll(t *testing.T, r source.Reader[string]) []string {
	t.Helper()
	var out []string
	for {
		b, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Records...)
	}
}

// TestSourceBoundedStopsAtStart: a bounded source stops at the offsets
// that were the partitions' ends when its enumerator started; records
// produced after that are not read. Its splits hold the stopping offsets.
func TestSourceBoundedStopsAtStart(t *testing.T) {
	cfg := cluster(t, 4, "in")
	want := produceSpread(t, cfg, "in", "before", 4, 200)
	src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Bounded: true})
	enum := enumeratorOf(t, src, 2, nil)
	st := enum.Snapshot()
	if len(st.Pending) != 4 {
		t.Fatalf("%d splits, want one per partition", len(st.Pending))
	}
	for _, s := range st.Pending {
		if s.Offset != 0 || s.Len != 50 {
			t.Errorf("split %v: start %d stop %d, want 0 and 50", s.ID, s.Offset, s.Len)
		}
	}
	produceSpread(t, cfg, "in", "after", 4, 40)
	var got []string
	for i := range 2 {
		r := readerOf(t, src, i, 2, enum)
		got = append(got, readAll(t, r)...)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := sameSet(got, want); err != nil {
		t.Fatal(err)
	}
}

// TestSourceRestoreMidTopic: two readers read part of a 4-partition topic,
// their positions are taken (as a checkpoint takes them) and they read on
// and fail; readers restored from the positions, dealt out at parallelism
// 1, 2 and 3, read the rest: before and after make every record once.
func TestSourceRestoreMidTopic(t *testing.T) {
	cfg := cluster(t, 4, "in")
	want := produceSpread(t, cfg, "in", "r", 4, 400)
	src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Bounded: true, BatchSize: 16})
	enum := enumeratorOf(t, src, 2, nil)
	var before []string
	var positions []source.Split
	for i := range 2 {
		r := readerOf(t, src, i, 2, enum)
		for len(before) < 60*(i+1) {
			b, err := r.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			before = append(before, b.Records...)
		}
		positions = append(positions, r.Positions()...)
		if _, err := r.Next(context.Background()); err != nil { // lost with the failure
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	pending := enum.Snapshot()
	for _, p := range []int{1, 2, 3} {
		enum := enumeratorOf(t, src, p, &pending)
		got := append([]string(nil), before...)
		for i := range p {
			r := readerOf(t, src, i, p, enum)
			var mine []source.Split
			for k, s := range positions {
				if k%p == i {
					mine = append(mine, s)
				}
			}
			r.AddSplits(mine)
			got = append(got, readAll(t, r)...)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if err := sameSet(got, want); err != nil {
			t.Errorf("restored at parallelism %d: %v", p, err)
		}
	}
}

// TestSourceDiscoversPartitions: an unbounded job reading a 1-partition
// topic finds a partition added while it runs and reads it from its
// earliest offset; every record is seen once.
func TestSourceDiscoversPartitions(t *testing.T) {
	cfg := cluster(t, 1, "grow")
	first := produceSpread(t, cfg, "grow", "a", 1, 50)
	src := stringSource(t, cfg, SourceOptions{Topics: []string{"grow"}, DiscoveryInterval: 100 * time.Millisecond})
	var got seen
	env := stream.New(stream.Options{Parallelism: 2})
	stream.Collect(stream.Map(stream.FromSource(env, src, watermark.NoWatermarks[string](), "kafka"), func(v string) string {
		got.add(v)
		return v
	}))
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { j.Cancel(); j.Wait() }()
	waitFor(t, "the first partition's records", func() bool { return got.len() >= len(first) })
	adm := kadm.NewClient(client(t, cfg))
	if _, err := adm.CreatePartitions(context.Background(), 2, "grow"); err != nil {
		t.Fatal(err)
	}
	var second []string
	for p := int32(1); p <= 2; p++ {
		vs := []string{"b" + strconv.Itoa(int(p)) + "-0", "b" + strconv.Itoa(int(p)) + "-1"}
		produce(t, cfg, "grow", p, vs...)
		second = append(second, vs...)
	}
	want := append(first, second...)
	waitFor(t, "the new partitions' records", func() bool { return got.len() >= len(want) })
	j.Cancel()
	j.Wait()
	if err := sameSet(got.get(), want); err != nil {
		t.Fatal(err)
	}
}

// stamped is a record with its Kafka timestamp.
type stamped struct {
	V  string
	TS int64
}

// TestSourceIdlePartition: of a topic's two partitions only one gets
// records; with idleness the silent one does not hold the watermark back,
// and a record seen late in the job sees the watermark its partition
// reached. Without idleness the watermark stays before any record.
func TestSourceIdlePartition(t *testing.T) {
	for _, idle := range []bool{true, false} {
		t.Run("idleness="+strconv.FormatBool(idle), func(t *testing.T) {
			cfg := cluster(t, 2, "in")
			produce(t, cfg, "in", 0, "first")
			src, err := NewSource(cfg, SourceOptions{Topics: []string{"in"}}, func(r *Record) (stamped, error) {
				return stamped{string(r.Value), r.Timestamp}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			strategy := watermark.ForBoundedOutOfOrderness[stamped](0).
				WithTimestampAssigner(func(s stamped, _ int64) int64 { return s.TS })
			if idle {
				strategy = strategy.WithIdleness(100 * time.Millisecond)
			}
			env := stream.New(stream.Options{Parallelism: 1, AutoWatermarkInterval: 20 * time.Millisecond})
			var wms seen
			stream.Collect(stream.Process(stream.FromSource(env, src, strategy, "kafka"), func() stream.ProcessFunction[stamped, string] {
				return stream.ProcessFunction[stamped, string]{ProcessElement: func(s stamped, c *stream.Context, _ stream.Collector[string]) error {
					wms.add(s.V + "@" + strconv.FormatInt(c.CurrentWatermark(), 10))
					return nil
				}}
			}))
			j, err := env.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { j.Cancel(); j.Wait() }()
			waitFor(t, "the first record", func() bool { return wms.len() >= 1 })
			firstTS := int64(-1)
			// probes until one sees a watermark at or after the first
			// record's time, or 30 probes went by
			for i := 0; i < 30; i++ {
				time.Sleep(50 * time.Millisecond)
				produce(t, cfg, "in", 0, "probe-"+strconv.Itoa(i))
				waitFor(t, "a probe", func() bool { return wms.len() >= i+2 })
				last := wms.get()[i+1]
				wm, _ := strconv.ParseInt(last[strings.IndexByte(last, '@')+1:], 10, 64)
				if firstTS < 0 {
					firstTS = 0
				}
				if wm > 0 {
					firstTS = wm
					break
				}
			}
			switch {
			case idle && firstTS <= 0:
				t.Fatalf("the idle partition held the watermark: %v", wms.get())
			case !idle && firstTS > 0:
				t.Fatalf("without idleness the watermark moved to %d: %v", firstTS, wms.get())
			}
		})
	}
}

// TestSourceBadRecord: a record the deserializer refuses fails the job
// with an error naming its topic, partition and offset.
func TestSourceBadRecord(t *testing.T) {
	cfg := cluster(t, 2, "in")
	produce(t, cfg, "in", 1, "1", "2", "x", "4")
	src, err := NewSource(cfg, SourceOptions{Topics: []string{"in"}, Bounded: true}, func(r *Record) (int, error) {
		return strconv.Atoi(string(r.Value))
	})
	if err != nil {
		t.Fatal(err)
	}
	env := stream.New(stream.Options{Parallelism: 1})
	stream.Collect(stream.FromSource(env, src, watermark.NoWatermarks[int](), "kafka"))
	_, err = env.Execute(context.Background())
	var re *RecordError
	if !errors.As(err, &re) || re.Topic != "in" || re.Partition != 1 || re.Offset != 2 {
		t.Fatalf("error %v, want a RecordError at in/1 offset 2", err)
	}
	if !strings.Contains(err.Error(), "topic in partition 1 offset 2") {
		t.Fatalf("error %q does not name the record", err)
	}
}

// TestSourceStartOffsets: the start positions resolve as their names say:
// earliest at 0, latest at the end, a timestamp at the first record at or
// after it, committed at the group's offsets (falling back where the
// group committed none). The offsets of a completed checkpoint are
// committed to the group.
func TestSourceStartOffsets(t *testing.T) {
	cfg := cluster(t, 2, "in")
	cl := client(t, cfg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	base := time.UnixMilli(1_700_000_000_000)
	for i := range 10 {
		r := &kgo.Record{Topic: "in", Partition: int32(i % 2), Value: []byte(strconv.Itoa(i)), Timestamp: base.Add(time.Duration(i) * time.Second)}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// partition 0 holds 0,2,4,6,8 (offsets 0-4), partition 1 holds 1,3,5,7,9
	adm := kadm.NewClient(cl)
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "in", Partition: 0, At: 3, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(context.Background(), "g", os); err != nil {
		t.Fatal(err)
	}
	starts := func(o Offsets) map[string]int64 {
		t.Helper()
		src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Group: "g", Start: o})
		enum := enumeratorOf(t, src, 1, nil)
		out := map[string]int64{}
		for _, s := range enum.Snapshot().Pending {
			out[s.ID] = s.Offset
		}
		return out
	}
	for _, c := range []struct {
		o      Offsets
		p0, p1 int64
	}{
		{Earliest(), 0, 0},
		{Latest(), 5, 5},
		{Timestamp(base.Add(5 * time.Second).UnixMilli()), 3, 2}, // 6 is p0's offset 3, 5 is p1's offset 2
		{Timestamp(base.Add(time.Hour).UnixMilli()), 5, 5},
		{Committed(Earliest()), 3, 0},
		{Committed(Latest()), 3, 5},
	} {
		got := starts(c.o)
		if got["in-0"] != c.p0 || got["in-1"] != c.p1 {
			t.Errorf("%v: starts %v, want in-0 at %d and in-1 at %d", c.o, got, c.p0, c.p1)
		}
	}

	// a reader whose checkpoint completes commits its positions
	src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Group: "g2", Bounded: true})
	enum := enumeratorOf(t, src, 1, nil)
	r := readerOf(t, src, 0, 1, enum)
	b, err := r.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pos := r.Positions()
	l := r.(source.CheckpointListener)
	l.Checkpointed(7, pos)
	if err := l.NotifyCheckpointComplete(7); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil { // waits for the commit
		t.Fatal(err)
	}
	got, err := adm.FetchOffsets(context.Background(), "g2")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range pos {
		p, _ := parseSplitID(s.ID)
		o, ok := got.Lookup(p.Topic, p.Partition)
		if !ok || o.At != s.Offset {
			t.Errorf("group offset of %s: %v, want %d (after a batch of %d)", s.ID, o.At, s.Offset, len(b.Records))
		}
	}
}

// TestOwner: partitions go round robin over the readers from a start the
// topic's Java hash code picks, as Flink's getSplitOwner.
func TestOwner(t *testing.T) {
	// "in".hashCode() = 105*31 + 110 = 3365; 3365*31 = 104315
	for _, c := range []struct {
		topic   string
		part    int32
		n, want int
	}{
		{"in", 0, 2, 1}, {"in", 1, 2, 0}, {"in", 0, 3, 104315 % 3}, {"in", 2, 3, (104315%3 + 2) % 3},
	} {
		if got := owner(partition{c.topic, c.part}, c.n); got != c.want {
			t.Errorf("owner(%s-%d, %d) = %d, want %d", c.topic, c.part, c.n, got, c.want)
		}
	}
	// U+1F600 is two UTF-16 units, 0xD83D 0xDE00: 55357*31 + 56832
	if got := javaHash("\U0001F600"); got != 55357*31+56832 {
		t.Errorf("javaHash = %d", got)
	}
	for _, id := range []string{"a-b-3", "x-0"} {
		p, err := parseSplitID(id)
		if err != nil || p.splitID() != id {
			t.Errorf("parseSplitID(%q) = %v, %v", id, p, err)
		}
	}
	for _, id := range []string{"nope", "-3", "t-", "t-x", "t-+1"} {
		if _, err := parseSplitID(id); err == nil {
			t.Errorf("parseSplitID(%q) accepted", id)
		}
	}
}

// TestSourceCommitsOnCheckpoint: a running job's source commits the
// offsets of each completed checkpoint to its group: after the job read
// every record and a checkpoint completed, the group's offsets are the
// partitions' ends.
func TestSourceCommitsOnCheckpoint(t *testing.T) {
	cfg := cluster(t, 3, "in")
	want := produceSpread(t, cfg, "in", "r", 3, 90)
	src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Group: "monitor"})
	var got seen
	env := stream.New(stream.Options{Parallelism: 2})
	env.EnableCheckpointing(time.Hour)
	stream.Collect(stream.Map(stream.FromSource(env, src, watermark.NoWatermarks[string](), "kafka"), func(v string) string {
		got.add(v)
		return v
	}))
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { j.Cancel(); j.Wait() }()
	waitFor(t, "every record", func() bool { return got.len() >= len(want) })
	if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(client(t, cfg))
	waitFor(t, "the group's offsets at the ends", func() bool {
		os, err := adm.FetchOffsets(context.Background(), "monitor")
		if err != nil {
			return false
		}
		for p := int32(0); p < 3; p++ {
			if o, ok := os.Lookup("in", p); !ok || o.At != 30 {
				return false
			}
		}
		return true
	})
	if err := sameSet(got.get(), want); err != nil {
		t.Fatal(err)
	}
}

// TestSourceInterruptedNext: a reader whose every Next is cut short by
// its context (as the runtime's periodic deadline and mail cut them)
// loses nothing: called again, it reads every record once.
func TestSourceInterruptedNext(t *testing.T) {
	cfg := cluster(t, 4, "in")
	want := produceSpread(t, cfg, "in", "r", 4, 2000)
	src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, Bounded: true, BatchSize: 7})
	enum := enumeratorOf(t, src, 1, nil)
	r := readerOf(t, src, 0, 1, enum)
	defer r.Close()
	var got []string
	for cut := 0; ; cut++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(cut%5)*100*time.Microsecond)
		b, err := r.Next(ctx)
		cancel()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		got = append(got, b.Records...)
	}
	if err := sameSet(got, want); err != nil {
		t.Fatal(err)
	}
}

// TestSourcePendingRecords: a reader's pendingRecords gauge is the
// records between its positions and the partitions' ends (Flink's
// pendingRecords): for a topic of 2 partitions of 300 records and a
// later tail of 20 records each, after every batch it equals what the
// topic holds minus what was read, and 0 at the end of a bounded read.
func TestSourcePendingRecords(t *testing.T) {
	cfg := cluster(t, 2, "in")
	produceSpread(t, cfg, "in", "r", 2, 600)
	src := stringSource(t, cfg, SourceOptions{Topics: []string{"in"}, BatchSize: 64})
	enum := enumeratorOf(t, src, 1, nil)
	g := metrics.NewGroup(clock.System{}, "kafka", "0")
	r, err := src.Reader(source.ReaderContext{Subtask: 0, Parallelism: 1, Splits: enum, Metrics: g})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	gauge := func() int64 {
		for _, s := range g.Samples() {
			if s.Name == "pendingRecords" {
				return s.Count
			}
		}
		t.Fatal("no pendingRecords gauge")
		return 0
	}
	read, total, tail, exact := 0, 600, false, 0
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for read < total {
		b, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("after %d records: %v", read, err)
		}
		read += len(b.Records)
		// a partition counts once a fetch saw its end: never more than left
		got := gauge()
		if got > int64(total-read) {
			t.Fatalf("after %d of %d records: pendingRecords %d, more than the %d left", read, total, got, total-read)
		}
		if got == int64(total-read) && got > 0 {
			exact++
		}
		if read >= 300 && !tail {
			produceSpread(t, cfg, "in", "tail", 2, 40)
			total, tail = total+40, true
		}
	}
	if got := gauge(); got != 0 {
		t.Errorf("pendingRecords %d after every record was read", got)
	}
	if exact == 0 {
		t.Error("pendingRecords never counted every record left")
	}
}
