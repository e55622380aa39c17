package text

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats"
)

// lineStarts is the oracle of the split rule: every line of data (the naive
// way, as oracle) with the offset of its first byte.
func lineStarts(data string) (lines []string, starts []int64) {
	lines = oracle(data)
	off := int64(0)
	for _, l := range lines {
		starts = append(starts, off)
		off += int64(len(l)) + 1
	}
	return lines, starts
}

// wantInRange returns the lines whose first byte lies in [start, end), in order.
func wantInRange(lines []string, starts []int64, start, end int64) []string {
	var out []string
	for i, s := range starts {
		if s >= start && s < end {
			out = append(out, lines[i])
		}
	}
	return out
}

// randomText makes lines of random lengths: empty lines, '\r\n' endings, lines
// longer than chunk, and sometimes no final newline.
func randomText(rng *rand.Rand, chunk int) string {
	var b strings.Builder
	n := rng.IntN(60)
	for i := range n {
		switch rng.IntN(8) {
		case 0: // empty
		case 1:
			b.WriteString(strings.Repeat("L", chunk+rng.IntN(3*chunk)))
		default:
			for range rng.IntN(12) {
				b.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		if rng.IntN(5) == 0 {
			b.WriteByte('\r')
		}
		if i < n-1 || rng.IntN(2) == 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// randomCuts cuts [0, size) into 1..8 ranges of random sizes.
func randomCuts(rng *rand.Rand, size int64) []int64 {
	cuts := []int64{0, size}
	if size > 1 {
		for range rng.IntN(8) {
			cuts = append(cuts, 1+rng.Int64N(size-1))
		}
	}
	slices.Sort(cuts)
	return slices.Compact(cuts)
}

// TestSplitRuleRandom reads random files through splits cut at random points:
// each split yields exactly the lines that start inside it, in order, so the
// splits together yield every line once; a parsed source yields the same
// lines without their trailing '\r'.
func TestSplitRuleRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	ctx := context.Background()
	for iter := range 400 {
		chunk := 1 + rng.IntN(16)
		data := randomText(rng, chunk)
		p := writeFile(t, data)
		lines, starts := lineStarts(data)
		cuts := randomCuts(rng, int64(len(data)))
		opts := Options{ChunkSize: chunk, BatchRows: 1 + rng.IntN(4)}
		src, err := OpenWith(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := OpenParsedWith(p, opts, func(b []byte, s *Strings) (string, error) { return s.String(b), nil })
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		for i := 0; i+1 < len(cuts); i++ {
			sp := &Split{file: p, start: cuts[i], end: cuts[i+1]}
			want := wantInRange(lines, starts, cuts[i], cuts[i+1])
			var got, gotParsed []string
			if err := src.Read(ctx, sp, func(b []string) error { got = append(got, b...); return nil }); err != nil {
				t.Fatal(err)
			}
			if err := parsed.Read(ctx, sp, func(b []string) error { gotParsed = append(gotParsed, b...); return nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("iteration %d, split %d-%d of %q: got %q, want %q", iter, cuts[i], cuts[i+1], data, got, want)
			}
			for j := range want {
				want[j] = strings.TrimSuffix(want[j], "\r")
			}
			if !slices.Equal(gotParsed, want) {
				t.Fatalf("iteration %d, parsed split %d-%d of %q: got %q, want %q", iter, cuts[i], cuts[i+1], data, gotParsed, want)
			}
			all = append(all, got...)
		}
		if !slices.Equal(all, lines) {
			t.Fatalf("iteration %d: the splits of %q yield %q, want %q", iter, data, all, lines)
		}
	}
}

// TestSplitsForRandom reads random files, alone or several in a glob, through
// SplitsFor(n): the splits are a multiple of n where the input is big
// enough, each file's ranges cover it in order, and together they yield the
// files' lines once each, in order.
func TestSplitsForRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	ctx := context.Background()
	for iter := range 100 {
		dir := t.TempDir()
		var want []string
		var total int64
		files := 1 + rng.IntN(3)
		for f := range files {
			var b strings.Builder
			for range rng.IntN(3000) {
				b.WriteString(strings.Repeat("x", rng.IntN(80)))
				if rng.IntN(4) == 0 {
					b.WriteByte('\r')
				}
				b.WriteByte('\n')
			}
			data := b.String()
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", f)), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			want = append(want, oracle(data)...)
			total += int64(len(data))
		}
		n := 1 + rng.IntN(4)
		maxSize := int64(1 + rng.IntN(100_000))
		src, err := OpenWith(dir, Options{SplitSize: maxSize, ChunkSize: 1 + rng.IntN(5000)})
		if err != nil {
			t.Fatal(err)
		}
		splits, err := src.SplitsFor(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		target := formats.SplitTarget(total, maxSize, n)
		base := (total + maxSize - 1) / maxSize
		if files == 1 && total/((base+int64(n)-1)/int64(n)*int64(n)) >= formats.MinSplitSize && len(splits)%n != 0 {
			t.Fatalf("iteration %d: %d splits of %d bytes for %d readers", iter, len(splits), total, n)
		}
		var got []string
		for _, sp := range splits {
			if sp.Size() > target || sp.Size() > maxSize {
				t.Fatalf("iteration %d: split %s over the target %d or the most %d", iter, sp, target, maxSize)
			}
			if err := src.Read(ctx, sp, func(b []string) error { got = append(got, b...); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: %d lines, want %d", iter, len(got), len(want))
		}
	}
}

// TestParsedErrorLine puts a malformed line at a random place in a file read
// through random splits: the one split that holds it fails with a ParseError
// naming the line's number in the file, and the other splits read cleanly.
func TestParsedErrorLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	ctx := context.Background()
	for iter := range 200 {
		lines := 1 + rng.IntN(200)
		bad := rng.IntN(lines)
		var b strings.Builder
		for i := range lines {
			if i == bad {
				b.WriteString("bad")
			} else {
				b.WriteString(strings.Repeat("1", 1+rng.IntN(30)))
			}
			if rng.IntN(3) == 0 {
				b.WriteByte('\r')
			}
			b.WriteByte('\n')
		}
		data := b.String()
		p := writeFile(t, data)
		_, starts := lineStarts(data)
		src, err := OpenParsedWith(p, Options{ChunkSize: 1 + rng.IntN(64)}, func(b []byte, _ *Strings) (int, error) {
			if strings.Trim(string(b), "1") != "" {
				return 0, errors.New("not ones")
			}
			return len(b), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		cuts := randomCuts(rng, int64(len(data)))
		for i := 0; i+1 < len(cuts); i++ {
			err := src.Read(ctx, &Split{file: p, start: cuts[i], end: cuts[i+1]}, func([]int) error { return nil })
			holds := starts[bad] >= cuts[i] && starts[bad] < cuts[i+1]
			var pe *ParseError
			switch {
			case holds && (!errors.As(err, &pe) || pe.Line != bad+1 || pe.File != p):
				t.Fatalf("iteration %d: split %d-%d: error %v, want line %d", iter, cuts[i], cuts[i+1], err, bad+1)
			case !holds && err != nil:
				t.Fatalf("iteration %d: split %d-%d without the bad line: %v", iter, cuts[i], cuts[i+1], err)
			}
		}
	}
}

// FuzzSplitRule cuts the fuzzed data at the fuzzed offsets: every split
// yields exactly the lines starting inside it.
func FuzzSplitRule(f *testing.F) {
	f.Add([]byte("a\r\nbb\n\nccc"), []byte{3, 4}, uint8(2))
	f.Add([]byte("\n\n\n"), []byte{1, 2}, uint8(1))
	f.Add([]byte("long line without end"), []byte{5}, uint8(3))
	f.Fuzz(func(t *testing.T, data, cutBytes []byte, chunk uint8) {
		size := int64(len(data))
		cuts := []int64{0, size}
		for _, c := range cutBytes {
			if size > 0 {
				cuts = append(cuts, int64(c)%(size+1))
			}
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		p := writeFile(t, string(data))
		src, err := OpenWith(p, Options{ChunkSize: 1 + int(chunk%32)})
		if err != nil {
			t.Fatal(err)
		}
		lines, starts := lineStarts(string(data))
		var all []string
		for i := 0; i+1 < len(cuts); i++ {
			var got []string
			if err := src.Read(context.Background(), &Split{file: p, start: cuts[i], end: cuts[i+1]}, func(b []string) error { got = append(got, b...); return nil }); err != nil {
				t.Fatal(err)
			}
			if want := wantInRange(lines, starts, cuts[i], cuts[i+1]); !slices.Equal(got, want) {
				t.Fatalf("split %d-%d: got %q, want %q", cuts[i], cuts[i+1], got, want)
			}
			all = append(all, got...)
		}
		if !slices.Equal(all, lines) {
			t.Fatalf("the splits yield %q, want %q", all, lines)
		}
	})
}
