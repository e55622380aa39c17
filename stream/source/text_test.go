package source

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// linesOf is the oracle of the text format: the file cut at '\n', a last
// line without '\n' a line, an empty file no line.
func linesOf(data string) []string {
	if data == "" {
		return nil
	}
	out := strings.Split(data, "\n")
	if strings.HasSuffix(data, "\n") {
		out = out[:len(out)-1]
	}
	return out
}

var textCases = []string{
	"",
	"\n",
	"one line without newline",
	"a\nb\nc\n",
	"a\r\nb\r\n\n\nlast",
	"ünïcödé\nline two is longer than the read size of seven\nx\n",
}

func TestTextFilesWhole(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i, data := range textCases {
		writeFile(t, dir, "f"+strconv.Itoa(i)+".txt", data)
		want = append(want, linesOf(data)...)
	}
	writeFile(t, dir, ".hidden", "not read\n")
	for _, read := range []int{1, 7, 64 << 10} {
		for _, p := range []int{1, 3} {
			src, err := Files(Text(), dir, ReadSize(read), BatchSize(2))
			if err != nil {
				t.Fatal(err)
			}
			res := readWhole(t, src, p)
			var got []string
			for i := range textCases {
				got = append(got, res.bySplit[filepath.Join(dir, "f"+strconv.Itoa(i)+".txt")]...)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("read size %d, p=%d: got %q, want %q", read, p, got, want)
			}
			if len(res.ended) != len(textCases) {
				t.Fatalf("%d splits ended, want %d", len(res.ended), len(textCases))
			}
		}
	}
}

// TestTextFileResume stops after k lines for every k, resumes from the
// reported position (a byte offset) and expects the file's lines.
func TestTextFileResume(t *testing.T) {
	dir := t.TempDir()
	for i, data := range textCases {
		path := writeFile(t, dir, "r"+strconv.Itoa(i)+".txt", data)
		for _, read := range []int{1, 5, 4096} {
			src, err := Files(Text(), path, BatchSize(1), ReadSize(read))
			if err != nil {
				t.Fatal(err)
			}
			checkResumeEvery(t, src, linesOf(data))
		}
	}
	// Several files: the enumerator's pending files come back with the snapshot.
	src, err := Files(Text(), dir, BatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, data := range textCases {
		want = append(want, linesOf(data)...)
	}
	checkResumeEvery(t, src, want)
}

// TestTextPositionIsByteOffset checks the position against the file: after
// k lines, Offset is the byte where line k+1 starts and Records is k.
func TestTextPositionIsByteOffset(t *testing.T) {
	data := "alpha\nbe\n\ngamma\r\nd"
	path := writeFile(t, t.TempDir(), "p.txt", data)
	src, err := Files(Text(), path, BatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	res := result[string]{bySplit: map[string][]string{}}
	off := 0
	for k, line := range linesOf(data) {
		readRecords(t, rs[0], &res, 1)
		off += len(line) + 1
		want := Split{ID: path, Offset: int64(min(off, len(data))), Records: int64(k + 1), Len: -1}
		if got := rs[0].Positions(); len(got) != 1 || got[0] != want {
			t.Fatalf("after line %d: positions %v, want %v", k+1, got, want)
		}
	}
}

func TestParseNamesFileAndLine(t *testing.T) {
	path := writeFile(t, t.TempDir(), "nums.txt", "1\n2\n3\nx4\n5\n")
	src, err := Files(Text(), path, BatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	nums := Parse(src, func(s string) (int, error) { return strconv.Atoi(s) })
	_, rs := newReaders(t, nums, 1, nil)
	got, err := nextRecords(t.Context(), rs[0], 5)
	if !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("got %v before the error", got)
	}
	if err == nil || !strings.Contains(err.Error(), path+" line 4: ") || !errors.Is(err, strconv.ErrSyntax) {
		t.Fatalf("err = %v, want one naming %s line 4", err, path)
	}
	// Resumed after line 2, the line number still counts from the file's start.
	_, rs = newReaders(t, nums, 1, nil)
	rs[0].AddSplits([]Split{{ID: path, Offset: 4, Records: 2, Len: -1}})
	if _, err := nextRecords(t.Context(), rs[0], 5); err == nil || !strings.Contains(err.Error(), path+" line 4: ") {
		t.Fatalf("resumed: err = %v, want one naming %s line 4", err, path)
	}
}
