package csv

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats"
)

// randomField is an unquoted word, or a quoted field that may hold the
// delimiter, doubled quotes, '\n' and "\r\n".
func randomField(rng *rand.Rand) string {
	if rng.IntN(3) > 0 {
		return strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(20))
	}
	parts := []string{"x", ",", `""`, "\n", "\r\n", "yy"}
	var b strings.Builder
	b.WriteByte('"')
	for range rng.IntN(8) {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	b.WriteByte('"')
	return b.String()
}

// TestSplitsForRandom reads random CSV files with a header, quoted fields
// holding newlines, "\r\n" record ends, blank lines and sometimes no final
// newline through SplitsFor(n) at small split sizes: the records are those
// encoding/csv reads from the whole file, header left out, each once and in
// order, and every split's first line number is the line its first record
// starts on.
func TestSplitsForRandom(t *testing.T) {
	type row struct {
		A, B, C string
		Line    int64 `weir:",line"`
	}
	rng := rand.New(rand.NewPCG(5, 8))
	ctx := context.Background()
	for iter := range 300 {
		var b strings.Builder
		b.WriteString("a,b,c\r\n")
		records := rng.IntN(300)
		for i := range records {
			if rng.IntN(10) == 0 {
				b.WriteString("\n") // a blank line
			}
			b.WriteString(randomField(rng) + "," + randomField(rng) + "," + randomField(rng))
			if i < records-1 || rng.IntN(2) == 0 {
				b.WriteString([]string{"\n", "\r\n"}[rng.IntN(2)])
			}
		}
		data := b.String()
		recs, err := stdParse(data)
		if err != nil {
			t.Fatalf("iteration %d: the oracle refuses %q: %v", iter, data, err)
		}
		want := threes(recs[1:])
		n := 1 + rng.IntN(4)
		p := writeFile(t, data)
		src := mustOpen[row](t, p, Options{SplitSize: int64(1 + rng.IntN(2000)), ChunkSize: 16 + rng.IntN(200), BatchRows: 1 + rng.IntN(9)})
		splits, err := src.SplitsFor(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		var got []Three
		for _, sp := range splits {
			first := true
			err := src.Read(ctx, sp, func(batch []row) error {
				for _, r := range batch {
					if first && r.Line != sp.(*Split).line && !strings.HasPrefix(data[sp.(*Split).start:], "\n") {
						t.Fatalf("iteration %d: split %s starts on line %d, its first record on %d", iter, sp, sp.(*Split).line, r.Line)
					}
					first = false
					got = append(got, Three{r.A, r.B, r.C})
				}
				return nil
			})
			if err != nil {
				t.Fatalf("iteration %d: %v", iter, err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d, %d splits for %d readers: %d records, want %d", iter, len(splits), n, len(got), len(want))
		}
	}
}

// TestSplitsForCount: a file of records bigger than the readers' share is cut
// into a multiple of n splits of about equal size.
func TestSplitsForCount(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,b,c\n")
	for b.Len() < 1<<20 {
		b.WriteString("1,\"two\nlines\",3\n")
	}
	p := writeFile(t, b.String())
	src := mustOpen[Three](t, p, Options{})
	for n := 1; n <= 4; n++ {
		splits, err := src.SplitsFor(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		step := formats.SplitTarget(int64(b.Len()-6), 32<<20, n)
		if len(splits) != n {
			t.Fatalf("%d splits for %d readers", len(splits), n)
		}
		for _, sp := range splits[:n-1] {
			if sp.Size() < step || sp.Size() > step+16 {
				t.Fatalf("split %s for %d readers, step %d", sp, n, step)
			}
		}
	}
}
