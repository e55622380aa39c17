package text

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestOpenParsed: every line of every file of a glob is parsed, once; a
// malformed line stops Read with a ParseError naming its file and line.
func TestOpenParsed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("a.txt", "1\n2\r\n3")
	write("b.txt", "40\n50\n")
	parse := func(b []byte, s *Strings) (string, error) {
		if _, err := strconv.Atoi(string(b)); err != nil {
			return "", err
		}
		return s.String(b), nil
	}
	src, err := OpenParsed(filepath.Join(dir, "*.txt"), parse)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	splits, err := src.Splits(ctx)
	if err != nil || len(splits) != 2 {
		t.Fatalf("%d splits, %v; want 2", len(splits), err)
	}
	var got []string
	for _, sp := range splits {
		if err := src.Read(ctx, sp, func(b []string) error { got = append(got, b...); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(got)
	if want := []string{"1", "2", "3", "40", "50"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}

	bad := write("bad.txt", "1\n2\nthree\n4\n")
	src, err = OpenParsed(bad, parse)
	if err != nil {
		t.Fatal(err)
	}
	splits, _ = src.Splits(ctx)
	err = src.Read(ctx, splits[0], func([]string) error { return nil })
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != bad || pe.Line != 3 {
		t.Fatalf("error %v, want a ParseError of %s line 3", err, bad)
	}
	if _, err := OpenParsed(filepath.Join(dir, "missing.txt"), parse); err == nil {
		t.Fatal("a missing file opened")
	}
}
