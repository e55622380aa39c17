package oracle

import (
	"bytes"
	"testing"
)

func TestSortLines(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"b\na\n":            "a\nb\n",
		"b\na":              "a\nb\n",
		"\n\nb\n":           "\n\nb\n",
		"a\xff\na\x00\nA\n": "A\na\x00\na\xff\n",
		"ab\na\nab\n":       "a\nab\nab\n",
	} {
		if got := string(SortLines([]byte(in))); got != want {
			t.Errorf("SortLines(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNastyLines(t *testing.T) {
	data := NastyLines(3, 2000)
	if !bytes.Equal(data, NastyLines(3, 2000)) || bytes.Equal(data, NastyLines(4, 2000)) {
		t.Fatal("NastyLines is not a function of its seed")
	}
	if bytes.Count(data, []byte("\n")) != 2000 || data[len(data)-1] != '\n' {
		t.Fatalf("%d lines, want 2000 terminated ones", bytes.Count(data, []byte("\n")))
	}
	lines := bytes.Split(data[:len(data)-1], []byte("\n"))
	var empty, dup, shared, high int
	for i, l := range lines {
		switch {
		case len(l) == 0:
			empty++
		case i > 0 && bytes.Equal(l, lines[i-1]):
			dup++
		case bytes.HasPrefix(l, []byte("shared-prefix:")):
			shared++
		}
		if bytes.ContainsFunc(l, func(r rune) bool { return r >= 0x80 || r == 0 || r == '\r' }) {
			high++
		}
	}
	if empty == 0 || dup == 0 || shared == 0 || high == 0 {
		t.Errorf("empty %d, duplicates %d, shared prefixes %d, nasty bytes %d: want some of each", empty, dup, shared, high)
	}
}
