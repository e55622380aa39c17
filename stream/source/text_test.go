package source

import (
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
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

// TestTextGrowingFile reads a file as it was when its split was opened: a
// last line cut short by a writer (the file grew since) is not read, nor is
// what was appended; a file that did not grow has its unterminated last line
// read.
func TestTextGrowingFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "g.txt", "a\nb\nu9,12")
	src, err := Files(Text(), path, BatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	got, err := nextRecords(t.Context(), rs[0], 1)
	if err != nil || !slices.Equal(got, []string{"a"}) {
		t.Fatalf("%v, %v", got, err)
	}
	appendFile(t, path, "3\nnext\n")
	got, err = nextRecords(t.Context(), rs[0], 10)
	if !slices.Equal(got, []string{"b"}) || !errors.Is(err, io.EOF) {
		t.Fatalf("after the append: %q, %v; want [b] and the end", got, err)
	}
	// read again, the file has grown complete lines
	if got := readWhole(t, src, 1).all; !slices.Equal(got, []string{"a", "b", "u9,123", "next"}) {
		t.Fatalf("whole: %q", got)
	}
}

// TestLineTooLong fails a line longer than MaxLineSize, naming the file, the
// line and the limit.
func TestLineTooLong(t *testing.T) {
	path := writeFile(t, t.TempDir(), "long.txt", "a\nb\n"+strings.Repeat("x", 100)+"\nc\n")
	src, err := Files(Text(), path, MaxLineSize(64), ReadSize(7))
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	got, err := nextRecords(t.Context(), rs[0], 4)
	if len(got) > 2 || err == nil || !strings.Contains(err.Error(), path+" line 3: a line longer than the limit of 64 bytes") {
		t.Fatalf("%q, %v", got, err)
	}
	src, _ = Files(Text(), path, MaxLineSize(101), ReadSize(7))
	if got := readWhole(t, src, 1).all; len(got) != 4 {
		t.Fatalf("at the limit: %q", got)
	}
}

// TestTextNotRegularFile refuses a named pipe, which cannot be read again
// from a position.
func TestTextNotRegularFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	src, err := Files(Text(), p)
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	if _, err := nextRecords(t.Context(), rs[0], 1); err == nil || !strings.Contains(err.Error(), p+" is a named pipe") {
		t.Fatalf("%v", err)
	}
}
