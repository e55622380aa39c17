package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naive is the oracle of Hand: the events one by one, the watermark after
// each the largest time - ooo - 1; an event whose window's end - 1 is at or
// below the watermark before it is late; every other window fires with the
// sum of its events.
func naive(events [][3]int64, size, ooo int64) (fired []string, late int) {
	type win struct{ key, start int64 }
	sums := map[win]int64{}
	wm, maxTs := int64(-1<<63), int64(-1<<63)
	for _, e := range events {
		start := e[1] - ((e[1]%size)+size)%size
		if start+size-1 <= wm {
			late++
		} else {
			sums[win{e[0], start}] += e[2]
		}
		maxTs = max(maxTs, e[1])
		wm = max(wm, maxTs-ooo-1)
	}
	for w, s := range sums {
		fired = append(fired, fmt.Sprintf("u%d,%d,%d,%d", w.key, w.start, w.start+size, s))
	}
	slices.Sort(fired)
	return fired, late
}

// TestHandMatchesNaive runs both stores of the hand loop over random events
// (out of order, some late) and over Gen's file, against naive.
func TestHandMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var events [][3]int64
	var in strings.Builder
	in.WriteString("user,ts,amount\n")
	for i := range 20000 {
		e := [3]int64{r.Int64N(30), int64(i*3) - r.Int64N(100), r.Int64N(1000)}
		if i%101 == 0 {
			e[1] -= 2000
		}
		events = append(events, e)
		fmt.Fprintf(&in, "u%d,%d,%d\n", e[0], e[1], e[2])
	}
	var gen bytes.Buffer
	if err := Gen(&gen, 30000, 50); err != nil {
		t.Fatal(err)
	}
	var genEvents [][3]int64
	for _, l := range strings.Split(strings.TrimSpace(gen.String()), "\n")[1:] {
		var e [3]int64
		if _, err := fmt.Sscanf(l, "u%d,%d,%d", &e[0], &e[1], &e[2]); err != nil {
			t.Fatal(err)
		}
		genEvents = append(genEvents, e)
	}
	for _, c := range []struct {
		name      string
		data      string
		events    [][3]int64
		size, ooo int64
	}{{"random", in.String(), events, 500, 50}, {"gen", gen.String(), genEvents, 1000, 300}} {
		want, wantLate := naive(c.events, c.size, c.ooo)
		if c.name == "random" && wantLate == 0 {
			t.Fatal("no late events")
		}
		for _, dense := range []bool{false, true} {
			var out bytes.Buffer
			w := bufio.NewWriter(&out)
			st, err := Hand(strings.NewReader(c.data), w, c.size, c.ooo, dense)
			if err != nil {
				t.Fatal(err)
			}
			w.Flush()
			got := strings.Split(strings.TrimSpace(out.String()), "\n")
			slices.Sort(got)
			if !slices.Equal(got, want) || st.Late != int64(wantLate) || st.Events != int64(len(c.events)) {
				t.Errorf("%s dense %v: %d firings, %d late of %d; want %d, %d", c.name, dense, len(got), st.Late, st.Events, len(want), wantLate)
			}
		}
	}
}
