package streaming

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/stream/watermark"
)

// wmLog records watermarks between events.
type wmLog struct{ log *[]string }

func (o wmLog) EmitWatermark(wm int64) { *o.log = append(*o.log, fmt.Sprint("wm ", wm)) }
func (o wmLog) MarkIdle()              {}
func (o wmLog) MarkActive()            {}

// TestHeldWatermarks runs window-stats' generator over random timestamps one
// event at a time and a batch at a time, as a source does: both give the
// same events and watermarks in the same order; before every event the last
// watermark sent is below its timestamp - 1 unless it is the watermark of
// the events before it (largest - bound - 1), which is then sent; and one
// goes out at least every heldEvery events while it moves.
func TestHeldWatermarks(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	ts := make([]int64, 20000)
	for i := range ts {
		ts[i] = int64(i) - r.Int64N(40)
		if i%97 == 0 {
			ts[i] -= 300
		}
	}
	const bound = 20
	run := func(batch bool) []string {
		var log []string
		s := watermark.ForGenerator(func(watermark.Context) watermark.Generator[int64] { return newHeldWatermarks[int64](bound) }).
			WithTimestampAssigner(func(v int64, _ int64) int64 { return v })
		sp, err := watermark.NewSplits(s, watermark.Context{}, wmLog{&log})
		if err != nil {
			t.Fatal(err)
		}
		x, _ := sp.Split("x")
		if !x.Batches() {
			t.Fatal("the split takes no batches")
		}
		emit := func(v int64, _ int64) { log = append(log, fmt.Sprint(v)) }
		for b := range slices.Chunk(ts, 1000) {
			if !batch {
				for _, v := range b {
					if err := x.Collect(v, watermark.Min, emit); err != nil {
						t.Fatal(err)
					}
				}
				continue
			}
			stamps := make([]int64, len(b))
			n, _ := x.Stamp(b, watermark.Min, stamps)
			for lo := 0; lo < n; {
				hi := lo + x.Ahead(stamps[lo:n])
				for _, v := range b[lo:hi] {
					emit(v, v)
				}
				x.Observe(stamps[lo:hi])
				lo = hi
			}
		}
		return log
	}
	one, batched := run(false), run(true)
	if !slices.Equal(one, batched) {
		t.Fatal("one at a time and batched differ")
	}
	sent, maxTs, since, wms := watermark.Min, watermark.Min, 0, 0
	for _, l := range one {
		if w, ok := strings.CutPrefix(l, "wm "); ok {
			fmt.Sscan(w, &sent)
			if sent != maxTs-bound-1 {
				t.Fatalf("sent %d, the watermark is %d", sent, maxTs-bound-1)
			}
			since, wms = 0, wms+1
			continue
		}
		var v int64
		fmt.Sscan(l, &v)
		if pending := maxTs - bound - 1; maxTs > watermark.Min && pending > sent && pending >= v-1 {
			t.Fatalf("event %d went out after the watermark %d was held back", v, pending)
		}
		if since > heldEvery {
			t.Fatalf("%d events without a watermark", since)
		}
		maxTs, since = max(maxTs, v), since+1
	}
	if wms < len(ts)/heldEvery {
		t.Fatalf("%d watermarks", wms)
	}
}
