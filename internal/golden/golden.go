package golden

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rewrite is the -rewrite test flag: write golden files instead of comparing.
var rewrite = flag.Bool("rewrite", false, "rewrite golden files (package golden) instead of comparing with them")

// Rewriting reports whether the test binary runs with -rewrite.
func Rewriting() bool { return *rewrite }

// Check compares got with the contents of the file at path and reports a
// mismatch as a test error: the first differing lines as a unified diff and
// the command that rewrites the file. With -rewrite it writes got to path
// instead (creating its directory). A missing file is a test failure unless
// rewriting.
func Check(t testing.TB, path string, got string) {
	t.Helper()
	if *rewrite {
		if err := writeFile(path, got); err != nil {
			t.Fatalf("golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("golden: %s does not exist; create it with: %s", path, rewriteCommand(t))
			return
		}
		t.Fatalf("golden: %v", err)
		return
	}
	if string(want) != got {
		t.Errorf("golden: %s: output differs from the file:\n%s\nrewrite with: %s",
			path, Diff(string(want), got), rewriteCommand(t))
	}
}

// writeFile writes s to path, creating its directory.
func writeFile(path, s string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("golden: rewrite %s: %w", path, err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("golden: rewrite %s: %w", path, err)
	}
	return nil
}

// diffContext is the number of equal lines shown before and after a hunk;
// diffMax is the number of lines shown of each side of it.
const (
	diffContext = 3
	diffMax     = 20
)

// Diff returns a unified-style diff of want and got: the one hunk from their
// first differing line to their last, with a few lines of context, each side
// cut after diffMax lines. It returns "" when they are equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := splitLines(want), splitLines(got)
	pre := 0
	for pre < len(w) && pre < len(g) && w[pre] == g[pre] {
		pre++
	}
	suf := 0
	for suf < len(w)-pre && suf < len(g)-pre && w[len(w)-1-suf] == g[len(g)-1-suf] {
		suf++
	}
	from := max(pre-diffContext, 0)
	wEnd, gEnd := len(w)-suf, len(g)-suf
	after := min(suf, diffContext)
	var b strings.Builder
	b.WriteString("--- want\n+++ got\n")
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", from+1, wEnd+after-from, from+1, gEnd+after-from)
	for _, l := range w[from:pre] {
		fmt.Fprintf(&b, " %s\n", l)
	}
	side := func(sign string, lines []string) {
		for i, l := range lines {
			if i == diffMax {
				fmt.Fprintf(&b, "%s... (%d more lines)\n", sign, len(lines)-diffMax)
				return
			}
			fmt.Fprintf(&b, "%s%s\n", sign, l)
		}
	}
	side("-", w[pre:wEnd])
	side("+", g[pre:gEnd])
	for _, l := range w[wEnd : wEnd+after] {
		fmt.Fprintf(&b, " %s\n", l)
	}
	return b.String()
}

// splitLines splits s into lines; a missing final newline shows as a last
// line marked "\ no newline at end".
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += `\ no newline at end`
	return lines
}

// rewriteCommand is the go test command that rewrites the golden files of t's
// top-level test, with the package's directory relative to the module root.
func rewriteCommand(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return fmt.Sprintf("go test %s -run '^%s$' -args -rewrite", packageDir(), name)
}

// packageDir returns the test's working directory (its package's directory)
// as ./path relative to the module root, or "." when there is no go.mod above.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel) + "/"
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}
