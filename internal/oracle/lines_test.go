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

func TestFieldEqual(t *testing.T) {
	for _, c := range []struct {
		got, want string
		ok        bool
	}{
		{"1.00", "1.00", true},
		{"1.0000000000001", "1.00", true},
		{"1.005", "1.00", false},
		{"0.0283", "0.0284", false},
		{"0", "0", true},
		{"0.001", "0", false},
		{"100010", "100000", false},
		{"1995-03-11", "1995-03-11", true},
		{"1995-03-12", "1995-03-11", false},
		{"IRAN", "IRAN ", false},
		{"", "", true},
		{"", "0", false},
	} {
		if got := FieldEqual(c.got, c.want); got != c.ok {
			t.Errorf("FieldEqual(%q, %q) = %v, want %v", c.got, c.want, got, c.ok)
		}
	}
}

func TestCompareAnswer(t *testing.T) {
	want := [][]string{{"a", "b"}, {"x", "1.5"}, {"y", "2"}}
	if err := CompareAnswer([][]string{{"a", "b"}, {"x", "1.5000000000000001"}, {"y", "2"}}, want); err != nil {
		t.Errorf("equal answers: %v", err)
	}
	for _, got := range [][][]string{
		{{"a", "c"}, {"x", "1.5"}, {"y", "2"}},
		{{"a", "b"}, {"y", "2"}, {"x", "1.5"}},
		{{"a", "b"}, {"x", "1.5"}},
		{{"a", "b"}, {"x", "1.5"}, {"y", "2", "3"}},
		{},
	} {
		if err := CompareAnswer(got, want); err == nil {
			t.Errorf("CompareAnswer(%q) = nil, want a difference", got)
		}
	}
}
