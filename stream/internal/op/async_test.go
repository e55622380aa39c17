package op

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTimerList: timers set at random times, some reset or removed, come
// out of the list in (time, setting) order, as a sorted slice says.
func TestTimerList(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for round := range 200 {
		n := 1 + r.IntN(40)
		l := newTimerList(n)
		type timer struct {
			slot int32
			at   int64
			seq  int
		}
		set := map[int32]timer{}
		for seq := range 3 * n {
			i := int32(r.IntN(n))
			if r.IntN(4) == 0 {
				l.remove(i)
				delete(set, i)
				continue
			}
			at := int64(r.IntN(20))
			l.insert(i, at)
			set[i] = timer{i, at, seq}
		}
		var want []timer
		for _, tm := range set {
			want = append(want, tm)
		}
		slices.SortFunc(want, func(a, b timer) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
		if l.n != len(want) {
			t.Fatalf("round %d: %d timers, want %d", round, l.n, len(want))
		}
		for _, w := range want {
			i, at, ok := l.first()
			if !ok || i != w.slot || at != w.at || !l.has(i) {
				t.Fatalf("round %d: first is slot %d at %d (%v), want slot %d at %d", round, i, at, ok, w.slot, w.at)
			}
			l.remove(i)
		}
		if _, _, ok := l.first(); ok || l.n != 0 {
			t.Fatalf("round %d: timers left", round)
		}
	}
}
