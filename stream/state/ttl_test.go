package state

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// clock is a manual clock in milliseconds.
type clock struct{ now int64 }

func (c *clock) read() int64 { return c.now }

func ttlConfigs() []TTLConfig {
	var out []TTLConfig
	for _, u := range []UpdateType{OnCreateAndWrite, OnReadAndWrite} {
		for _, v := range []Visibility{NeverReturnExpired, ReturnExpiredIfNotCleanedUp} {
			out = append(out, TTLConfig{TTL: 10 * time.Millisecond, Update: u, Visibility: v})
		}
	}
	return out
}

// oval is the oracle of a value with TTL: its value and last access time.
type oval struct {
	v  int
	ts int64
}

// otll applies Flink's TTL rules to one oracle entry on a read: it returns
// the value to see and whether the entry stays.
func ottlRead(cfg TTLConfig, e oval, ok bool, now int64) (v int, seen, stays bool, ne oval) {
	if !ok {
		return 0, false, false, e
	}
	if e.ts+cfg.TTL.Milliseconds() <= now {
		return e.v, cfg.Visibility == ReturnExpiredIfNotCleanedUp, false, e
	}
	if cfg.Update == OnReadAndWrite {
		e.ts = now
	}
	return e.v, true, true, e
}

// TestValueAndMapTTLAgainstOracle runs random writes, reads and clock moves on
// a ValueState and a MapState with each TTL configuration and compares them
// with an oracle that keeps each entry's last access time.
func TestValueAndMapTTLAgainstOracle(t *testing.T) {
	for ci, cfg := range ttlConfigs() {
		c := &clock{}
		b, _ := newBackend[string](t, 8, KeyGroupRange{0, 7}, 0, c.read)
		val, _ := GetValueState(b, ValueDescriptor[int]{Name: "v", TTL: cfg})
		mp, _ := GetMapState(b, MapDescriptor[int, int]{Name: "m", TTL: cfg})
		oV := map[string]oval{}
		oM := map[string]map[int]oval{}
		r := rand.New(rand.NewPCG(uint64(ci), 9))
		for i := 0; i < 5000; i++ {
			key := keyName(r.IntN(8))
			b.SetCurrentKey(key)
			uk := r.IntN(4)
			switch r.IntN(6) {
			case 0:
				c.now += int64(r.IntN(6))
			case 1:
				v := r.IntN(100)
				val.Update(v)
				oV[key] = oval{v, c.now}
			case 2:
				v := r.IntN(100)
				mp.Put(uk, v)
				if oM[key] == nil {
					oM[key] = map[int]oval{}
				}
				oM[key][uk] = oval{v, c.now}
			case 3:
				got, ok := val.Value()
				e, had := oV[key]
				want, seen, stays, ne := ottlRead(cfg, e, had, c.now)
				if ok != seen || (ok && got != want) {
					t.Fatalf("cfg %+v step %d: Value() = %d, %v; want %d, %v", cfg, i, got, ok, want, seen)
				}
				if stays {
					oV[key] = ne
				} else {
					delete(oV, key)
				}
			case 4:
				got, ok := mp.Get(uk)
				e, had := oM[key][uk]
				want, seen, stays, ne := ottlRead(cfg, e, had, c.now)
				if ok != seen || (ok && got != want) {
					t.Fatalf("cfg %+v step %d: Get(%d) = %d, %v; want %d, %v", cfg, i, uk, got, ok, want, seen)
				}
				if stays {
					oM[key][uk] = ne
				} else {
					delete(oM[key], uk)
				}
			case 5:
				got := maps.Collect(mp.All())
				want := map[int]int{}
				for uk, e := range oM[key] {
					v, seen, stays, ne := ottlRead(cfg, e, true, c.now)
					if seen {
						want[uk] = v
					}
					if stays {
						oM[key][uk] = ne
					} else {
						delete(oM[key], uk)
					}
				}
				if !maps.Equal(got, want) {
					t.Fatalf("cfg %+v step %d: All() = %v, want %v", cfg, i, got, want)
				}
			}
		}
		// everything expires; reading it all leaves no memory behind
		c.now += 100
		for i := 0; i < 8; i++ {
			b.SetCurrentKey(keyName(i))
			val.Value()
			for range mp.All() {
			}
		}
		if b.MemoryUsed() != 0 {
			t.Fatalf("cfg %+v: %d bytes after every entry expired and was read", cfg, b.MemoryUsed())
		}
	}
}

// TestListTTLPerElement: each element of a list expires on its own.
func TestListTTLPerElement(t *testing.T) {
	for _, cfg := range ttlConfigs() {
		c := &clock{}
		b, _ := newBackend[string](t, 8, KeyGroupRange{0, 7}, 0, c.read)
		l, _ := GetListState(b, ListDescriptor[string]{Name: "l", TTL: cfg})
		b.SetCurrentKey("k")
		l.Add("a")
		c.now = 5
		l.AddAll([]string{"b", "c"})
		c.now = 9
		if got := l.Get(); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("%+v at 9: %v", cfg, got)
		}
		c.now = 10
		got := l.Get()
		want := []string{"b", "c"}
		if cfg.Update == OnReadAndWrite {
			want = []string{"a", "b", "c"} // the read at 9 refreshed all
		} else if cfg.Visibility == ReturnExpiredIfNotCleanedUp {
			want = []string{"a", "b", "c"} // a is returned by the read that removes it
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%+v at 10: %v, want %v", cfg, got, want)
		}
		if cfg.Update == OnCreateAndWrite {
			if got := l.Get(); !slices.Equal(got, []string{"b", "c"}) {
				t.Fatalf("%+v at 10 again: %v", cfg, got)
			}
		}
		c.now = 30
		l.Get()
		if got := l.Get(); got != nil || b.MemoryUsed() != 0 {
			t.Fatalf("%+v at 30: %v, %d bytes", cfg, got, b.MemoryUsed())
		}
	}
}

// TestReducingAndAggregatingTTL: the accumulated value expires as one; an add
// after expiry starts afresh.
func TestReducingAndAggregatingTTL(t *testing.T) {
	c := &clock{}
	b, _ := newBackend[int64](t, 8, KeyGroupRange{0, 7}, 0, c.read)
	cfg := TTLConfig{TTL: 10 * time.Millisecond}
	red, _ := GetReducingState(b, ReducingDescriptor[int64]{Name: "r", Reduce: sum, TTL: cfg})
	agg, _ := GetAggregatingState(b, AggregatingDescriptor[int64, avg, float64]{Name: "a", Func: avgFunc{}, TTL: cfg})
	b.SetCurrentKey(1)
	red.Add(1)
	agg.Add(1)
	c.now = 5
	red.Add(2)
	agg.Add(3)
	c.now = 14
	if v, ok := red.Get(); !ok || v != 3 {
		t.Fatalf("reducing at 14: %d, %v", v, ok)
	}
	if v, ok := agg.Get(); !ok || v != 2 {
		t.Fatalf("aggregating at 14: %v, %v", v, ok)
	}
	c.now = 15
	red.Add(10)
	agg.Add(10)
	if v, _ := red.Get(); v != 10 {
		t.Fatalf("reducing after expiry: %d, want 10", v)
	}
	if v, _ := agg.Get(); v != 10 {
		t.Fatalf("aggregating after expiry: %v, want 10", v)
	}
	c.now = 25
	if _, ok := red.Get(); ok {
		t.Fatal("reducing value did not expire")
	}
	if _, ok := agg.Get(); ok {
		t.Fatal("aggregating value did not expire")
	}
	if b.MemoryUsed() != 0 {
		t.Fatalf("%d bytes left", b.MemoryUsed())
	}
}

// TestTTLExpiredOverflow: Flink's TtlUtils caps ts + ttl at MaxInt64 instead
// of wrapping to a negative time that would expire everything.
func TestTTLExpiredOverflow(t *testing.T) {
	tt := newTTL(TTLConfig{TTL: math.MaxInt64})
	ts := int64(math.MaxInt64 - 5)
	if tt.expired(ts, math.MaxInt64-1) {
		t.Error("expired before MaxInt64")
	}
	if !tt.expired(ts, math.MaxInt64) {
		t.Error("not expired at MaxInt64")
	}
}
