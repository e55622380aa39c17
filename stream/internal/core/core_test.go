package core

import (
	"slices"
	"testing"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/watermark"
)

// TestCountingAllocs: counting a chained operator's records costs no
// allocation per batch.
func TestCountingAllocs(t *testing.T) {
	var m flow.TaskMetrics
	c := m.Operator("op")
	var in Output[int] = CountIn[int]{Discard[int]{}, c}
	var out Output[int] = CountOut[int]{in, c}
	b := make([]Record[int], 64)
	if n := testing.AllocsPerRun(100, func() { _ = out.Push(b) }); n != 0 {
		t.Errorf("%v allocations per counted batch, want 0", n)
	}
	if c.RecordsIn() != 101*64 || c.RecordsOut() != 101*64 {
		t.Errorf("counted %d in and %d out, want %d each", c.RecordsIn(), c.RecordsOut(), 101*64)
	}
}

type kv struct{ K, V int }

// TestRecordsRoundtrip encodes records and decodes them back; a truncated
// encoding is refused.
func TestRecordsRoundtrip(t *testing.T) {
	codec, err := RecordCodec[kv]()
	if err != nil {
		t.Fatal(err)
	}
	rs := []Record[kv]{{Value: kv{1, 2}, Timestamp: 7}, {Value: kv{3, -4}, Timestamp: watermark.Min}}
	back, err := DecodeRecords(codec, AppendRecords(codec, nil, rs))
	if err != nil || !slices.Equal(back, rs) {
		t.Fatalf("records %v, %v; want %v", back, err, rs)
	}
	if _, err := DecodeRecords(codec, AppendRecords(codec, nil, rs)[:5]); err == nil {
		t.Fatal("a truncated record decoded")
	}
}

// TestEmitter: records come out in batches of the emitter's size, in
// order, each with its timestamp.
func TestEmitter(t *testing.T) {
	var out Records[int]
	e := NewEmitter[int](&out, 3)
	e.Emit(1, 10)
	e.EmitAll([]int{2, 3, 4}, 20)
	e.EmitStamped([]int{5, 6, 7}, []int64{50, 60, 70})
	if len(out.Recs) != 6 {
		t.Fatalf("%d records pushed before the flush, want two full batches of 3", len(out.Recs))
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []Record[int]{{1, 10}, {2, 20}, {3, 20}, {4, 20}, {5, 50}, {6, 60}, {7, 70}}
	if !slices.Equal(out.Recs, want) {
		t.Fatalf("got %v, want %v", out.Recs, want)
	}
}
