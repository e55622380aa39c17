package main

import (
	"bufio"
	"strings"
	"testing"

	"github.com/weirdata/weir/nexmark"
	"github.com/weirdata/weir/nexmark/nexmarktest"
)

// TestHandMatchesOracle: each hand loop's rows equal the oracle's, so the
// benchmark compares weir with loops that compute the same answers.
func TestHandMatchesOracle(t *testing.T) {
	c := nexmark.Config{Seed: 3, Rate: 500}
	n := int64(20000)
	g := nexmark.NewGenerator(c)
	events := make([]nexmark.Event, n)
	for i := range n {
		g.Event(i, &events[i])
	}
	for _, q := range []string{"q0", "q1", "q2", "q5", "q7"} {
		var b strings.Builder
		w := bufio.NewWriter(&b)
		rows, err := Hand(q, c, n, w)
		if err != nil {
			t.Fatal(err)
		}
		w.Flush()
		wantHeader, want := nexmarktest.Oracle(q, events)
		header, got := nexmarktest.ReadCSV(t, b.String())
		if rows != int64(len(got)) {
			t.Errorf("%s: %d rows counted, %d written", q, rows, len(got))
		}
		nexmarktest.CheckRows(t, q+" hand", wantHeader, header, want, got)
	}
}
