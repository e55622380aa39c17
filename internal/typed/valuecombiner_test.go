package typed

import (
	"fmt"
	"testing"

	"github.com/weirdata/weir/memory"
)

type vcRec struct {
	K int64
	V []float64
	N int64
}

// TestValueCombiner: the partial results a ValueCombiner sends add up, per
// key, to the sums computed directly, whether it flushes for its group count
// (more keys than CombinerEntries) or for the bytes its values own (long
// slices), and with a function that returns its first argument changed in
// place (the combiner owns its values: the input records stay as they were).
func TestValueCombiner(t *testing.T) {
	inPlace := func(a, b vcRec) vcRec {
		for i := range a.V {
			a.V[i] += b.V[i]
		}
		a.N += b.N
		return a
	}
	fresh := func(a, b vcRec) vcRec {
		v := make([]float64, len(a.V))
		for i := range v {
			v[i] = a.V[i] + b.V[i]
		}
		return vcRec{K: a.K, V: v, N: a.N + b.N}
	}
	for _, tc := range []struct {
		name            string
		keys, dims, per int
		fn              func(a, b vcRec) vcRec
	}{
		{"many-keys", CombinerEntries + 5000, 2, 3, fresh},
		{"long-values", 50, 300, 100, inPlace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := NewKeyer(func(r vcRec) int64 { return r.K })
			if err != nil {
				t.Fatal(err)
			}
			mgr := memory.MustNewManager(memory.Options{})
			defer mgr.Close()
			res := mgr.NewReservation("test")
			c := NewValueCombiner(k, mustCodec[vcRec](t), tc.fn, res, 100)
			if res.Bytes() == 0 {
				t.Fatal("the combiner reserved nothing")
			}
			want := map[int64][]float64{}
			wantN := map[int64]int64{}
			var in []vcRec
			for i := range tc.per * tc.keys {
				key := int64((i * 7919) % tc.keys)
				v := make([]float64, tc.dims)
				for j := range v {
					v[j] = float64(i%13 + j)
				}
				in = append(in, vcRec{K: key, V: v, N: 1})
				if want[key] == nil {
					want[key] = make([]float64, tc.dims)
				}
				for j := range v {
					want[key][j] += v[j]
				}
				wantN[key]++
			}
			got := map[int64][]float64{}
			gotN := map[int64]int64{}
			sends := 0
			c.Reset(func(b []vcRec) error {
				if len(b) > 100 {
					t.Fatalf("batch of %d, want at most 100", len(b))
				}
				sends++
				for _, r := range b {
					if got[r.K] == nil {
						got[r.K] = make([]float64, tc.dims)
					}
					for j := range r.V {
						got[r.K][j] += r.V[j]
					}
					gotN[r.K] += r.N
				}
				return nil
			})
			for i := 0; i < len(in); i += 64 {
				if err := c.Add(in[i:min(i+64, len(in))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			for i, r := range in {
				if r.V[0] != float64(i%13) {
					t.Fatalf("input record %d changed: %v", i, r.V[:1])
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d keys, want %d", len(got), len(want))
			}
			for key, w := range want {
				if gotN[key] != wantN[key] || fmt.Sprint(got[key]) != fmt.Sprint(w) {
					t.Fatalf("key %d: %v (%d records), want %v (%d)", key, got[key], gotN[key], w, wantN[key])
				}
			}
			if sends < 2 {
				t.Fatalf("sent %d times: the combiner never flushed before the end", sends)
			}
			_ = res.Release()
		})
	}
}
