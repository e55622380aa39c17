package state

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAddPresent: AddPresent of the reducing and aggregating states reports
// whether the current key had a value in the current namespace before, as a
// set of (key, namespace) pairs kept beside them says; a Clear or an expiry
// by TTL ends the presence, and the sums match the oracle's.
func TestAddPresent(t *testing.T) {
	now := int64(0)
	b, _ := newBackend[int](t, 16, KeyGroupRange{0, 15}, 0, func() int64 { return now })
	red, err := NewReducing[int, int](b, ReducingDescriptor[int64]{Name: "r", Reduce: func(a, v int64) int64 { return a + v }})
	if err != nil {
		t.Fatal(err)
	}
	agg, err := NewAggregating[int, int](b, AggregatingDescriptor[int64, avg, float64]{Name: "a", Func: avgFunc{}, TTL: TTLConfig{TTL: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	type kn struct{ k, n int }
	sums := map[kn]int64{}   // the reducing state's oracle
	stamps := map[kn]int64{} // the aggregating state's last write
	r := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 5000; i++ {
		now += int64(r.IntN(3))
		k := kn{r.IntN(30), r.IntN(4)}
		b.SetCurrentKey(k.k)
		red.SetNamespace(k.n)
		agg.SetNamespace(k.n)
		if r.IntN(10) == 0 {
			red.Clear()
			agg.Clear()
			delete(sums, k)
			delete(stamps, k)
			continue
		}
		v := int64(r.IntN(100))
		_, had := sums[k]
		if got := red.AddPresent(v); got != had {
			t.Fatalf("step %d: reducing AddPresent %v, want %v", i, got, had)
		}
		sums[k] += v
		if got, _ := red.Get(); got != sums[k] {
			t.Fatalf("step %d: reducing sum %d, want %d", i, got, sums[k])
		}
		ts, ok := stamps[k]
		live := ok && now-ts < 50
		if got := agg.AddPresent(v); got != live {
			t.Fatalf("step %d: aggregating AddPresent %v, want %v (written at %d, now %d)", i, got, live, ts, now)
		}
		stamps[k] = now
	}
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
}
