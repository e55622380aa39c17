package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a testing.TB that keeps what Check reports instead of failing.
type recorder struct {
	testing.TB
	errors, fatals []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

// setRewrite sets the -rewrite flag for the rest of the test.
func setRewrite(t *testing.T, v bool) {
	old := *rewrite
	*rewrite = v
	t.Cleanup(func() { *rewrite = old })
}

func TestCheckMatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Check(r, path, "a\nb\n")
	if len(r.errors)+len(r.fatals) != 0 {
		t.Errorf("equal output reported: %q %q", r.errors, r.fatals)
	}
}

func TestCheckReportsMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	want := "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
	if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Check(r, path, "one\ntwo\nthree\nfour\nFIVE\nsix\nseven\n")
	if len(r.errors) != 1 || len(r.fatals) != 0 {
		t.Fatalf("errors %q, fatals %q: want one error", r.errors, r.fatals)
	}
	msg := r.errors[0]
	for _, s := range []string{
		path,
		"--- want\n+++ got\n@@ -2,6 +2,6 @@\n two\n three\n four\n-five\n+FIVE\n six\n seven\n",
		"go test ./internal/golden/ -run '^TestCheckReportsMismatch$' -args -rewrite",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("report lacks %q:\n%s", s, msg)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Errorf("a mismatch changed the file: %q", b)
	}
}

func TestCheckMissingFile(t *testing.T) {
	r := &recorder{TB: t}
	Check(r, filepath.Join(t.TempDir(), "nope.txt"), "x\n")
	if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "does not exist") {
		t.Errorf("fatals %q: want one naming the missing file", r.fatals)
	}
}

func TestCheckRewrite(t *testing.T) {
	setRewrite(t, true)
	path := filepath.Join(t.TempDir(), "sub", "out.txt")
	r := &recorder{TB: t}
	Check(r, path, "new\n")
	if len(r.errors)+len(r.fatals) != 0 {
		t.Fatalf("rewrite reported: %q %q", r.errors, r.fatals)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "new\n" {
		t.Fatalf("file %q, %v: want the new output", b, err)
	}
	setRewrite(t, false)
	Check(r, path, "new\n")
	if len(r.errors)+len(r.fatals) != 0 {
		t.Errorf("the rewritten file does not match: %q %q", r.errors, r.fatals)
	}
}

func TestDiff(t *testing.T) {
	for _, c := range []struct{ want, got, diff string }{
		{"a\n", "a\n", ""},
		{"a\nb\n", "a\n", "--- want\n+++ got\n@@ -1,2 +1,1 @@\n a\n-b\n"},
		{"", "x\n", "--- want\n+++ got\n@@ -1,0 +1,1 @@\n+x\n"},
		{"a\nb", "a\nb\n", "--- want\n+++ got\n@@ -1,2 +1,2 @@\n a\n-b\\ no newline at end\n+b\n"},
		// Context: three lines before and after the hunk.
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nx\ny\n6\n7\n8\n9\n",
			"--- want\n+++ got\n@@ -2,7 +2,8 @@\n 2\n 3\n 4\n-5\n+x\n+y\n 6\n 7\n 8\n"},
	} {
		if got := Diff(c.want, c.got); got != c.diff {
			t.Errorf("Diff(%q, %q) =\n%s\nwant\n%s", c.want, c.got, got, c.diff)
		}
	}
	long := strings.Repeat("x\n", 30)
	if d := Diff("", long); !strings.Contains(d, "+... (10 more lines)\n") || strings.Count(d, "+x\n") != diffMax {
		t.Errorf("a long hunk is not cut after %d lines:\n%s", diffMax, d)
	}
}

const multiCase = `# A file of cases: the command upper prints its input in upper case.
upper name=a
hello
----
HELLO

# Output with a blank line uses doubled separators.
upper name=b lines=(x, y) verbose
one

two
----
----
ONE

TWO
----
----

upper name=c
----
`

func TestParse(t *testing.T) {
	items, err := parse("f.txt", multiCase)
	if err != nil {
		t.Fatal(err)
	}
	var cases []*Case
	for _, it := range items {
		if it.c != nil {
			cases = append(cases, it.c)
		}
	}
	if len(cases) != 3 {
		t.Fatalf("%d cases, want 3", len(cases))
	}
	a, b, c := cases[0], cases[1], cases[2]
	if a.Pos != "f.txt:2" || a.Cmd != "upper" || a.Args["name"] != "a" || a.Input != "hello" || a.Expected != "HELLO\n" {
		t.Errorf("case a: %+v", a)
	}
	if b.Pos != "f.txt:8" || b.Input != "one\n\ntwo" || b.Expected != "ONE\n\nTWO\n" {
		t.Errorf("case b: %+v", b)
	}
	if v, ok := b.Arg("lines"); !ok || v != "x, y" {
		t.Errorf("case b: lines = %q, %v; want \"x, y\"", v, ok)
	}
	if v, ok := b.Arg("verbose"); !ok || v != "" {
		t.Errorf("case b: verbose = %q, %v; want a bare key", v, ok)
	}
	if _, ok := b.Arg("nope"); ok {
		t.Error("case b has an argument it was not given")
	}
	if c.Input != "" || c.Expected != "" {
		t.Errorf("case c: %+v", c)
	}
	if got := format(items); got != multiCase {
		t.Errorf("format(parse(f)) differs:\n%s", Diff(multiCase, got))
	}
	for _, bad := range []string{"cmd\nno separator\n", "cmd\n----\n----\nunclosed\n", "cmd a=(x\n----\n"} {
		if _, err := parse("bad.txt", bad); err == nil || !strings.HasPrefix(err.Error(), "golden: bad.txt:") {
			t.Errorf("parse(%q): err %v, want one naming the file", bad, err)
		}
	}
}

func upper(t *testing.T, d *Case) string { return strings.ToUpper(d.Input) }

func TestRunFileMatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases.txt")
	if err := os.WriteFile(path, []byte(multiCase), 0o644); err != nil {
		t.Fatal(err)
	}
	var ran []string
	RunFile(t, path, func(t *testing.T, d *Case) string {
		ran = append(ran, d.Args["name"]+"="+t.Name())
		return upper(t, d)
	})
	want := "a=TestRunFileMatches/cases.txt:2 b=TestRunFileMatches/cases.txt:8 c=TestRunFileMatches/cases.txt:20"
	if got := strings.Join(ran, " "); got != want {
		t.Errorf("ran %s, want %s", got, want)
	}
}

func TestRunFileRewriteRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases.txt")
	stale := strings.Replace(strings.Replace(multiCase, "HELLO", "stale", 1), "ONE\n\nTWO", "stale", 1)
	stale = strings.Replace(stale, "upper name=c\n----\n", "upper name=c\n----\nstale\nlines\n", 1)
	if err := os.WriteFile(path, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	items, err := parse(path, stale)
	if err != nil {
		t.Fatal(err)
	}
	// Without -rewrite, each stale case is a mismatch with a diff.
	for _, it := range items {
		if c := it.c; c != nil {
			c.got, c.ran = withNewline(strings.ToUpper(c.Input)), true
			if msg := c.mismatch(); msg == "" || !strings.Contains(msg, "-stale\n") || !strings.Contains(msg, c.Pos) {
				t.Errorf("%s: mismatch %q, want a diff from the stale output", c.Pos, msg)
			}
		}
	}
	setRewrite(t, true)
	RunFile(t, path, upper)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != multiCase {
		t.Errorf("rewritten file differs from the expected one:\n%s", Diff(multiCase, string(got)))
	}
	// A second rewrite changes nothing, and the file now passes.
	RunFile(t, path, upper)
	if again, _ := os.ReadFile(path); string(again) != multiCase {
		t.Errorf("second rewrite changed the file:\n%s", Diff(multiCase, string(again)))
	}
	setRewrite(t, false)
	RunFile(t, path, upper)
}
