package cli

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirdata/weir/internal/oracle"
)

// gnuSort runs LC_ALL=C sort on path, or returns false if there is no sort.
func gnuSort(t *testing.T, path string) ([]byte, bool) {
	t.Helper()
	bin, err := exec.LookPath("sort")
	if err != nil {
		return nil, false
	}
	cmd := exec.Command(bin, path)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("LC_ALL=C sort: %v", err)
	}
	return out, true
}

// runWeir runs the weir command line in-process.
func runWeir(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = Execute(ctx, args, &o, &e)
	return code, o.String(), e.String()
}

// sortDirs makes the directories of one CLI run and checks them afterwards.
type sortDirs struct {
	in, outDir, tmp string
}

func newSortDirs(t *testing.T, data []byte) sortDirs {
	t.Helper()
	d := sortDirs{in: filepath.Join(t.TempDir(), "input.txt"), outDir: t.TempDir(), tmp: t.TempDir()}
	if err := os.WriteFile(d.in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d sortDirs) out() string { return filepath.Join(d.outDir, "sorted.txt") }

// checkClean asserts that the spill directory is empty and that the output
// directory holds the output file only if wantOutput.
func (d sortDirs) checkClean(t *testing.T, wantOutput bool) {
	t.Helper()
	if ents, _ := os.ReadDir(d.tmp); len(ents) != 0 {
		t.Errorf("spill directory not empty: %v", ents)
	}
	ents, _ := os.ReadDir(d.outDir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	switch {
	case wantOutput && (len(names) != 1 || names[0] != "sorted.txt"):
		t.Errorf("output directory holds %v, want only sorted.txt", names)
	case !wantOutput && len(names) != 0:
		t.Errorf("output directory holds %v after a failure, want nothing", names)
	}
}

func TestSortCommand(t *testing.T) {
	inputs := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"one-empty-line", []byte("\n")},
		{"no-trailing-newline", []byte("b\nc\na")},
		{"crlf", []byte("b\r\na\r\nb\r\n\r\na\n")},
		{"nasty", oracle.NastyLines(1, 3000)},
		{"spilling", oracle.NastyLines(2, 60000)},
		{"random-100-byte-lines", randomLines(t, 20000)},
		{"lines-longer-than-buffers", longLines(6, 300)},
		// equal bounds: some ranges get no line
		{"skewed", append(bytes.Repeat([]byte("same\n"), 30000), "a\nz\n"...)},
	}
	for _, in := range inputs {
		for _, cfg := range []struct {
			memory      string
			parallelism string
		}{{"256MiB", "1"}, {"64KiB", "1"}, {"64KiB", "3"}, {"1MiB", "2"}} {
			t.Run(fmt.Sprintf("%s/memory=%s/parallelism=%s", in.name, cfg.memory, cfg.parallelism), func(t *testing.T) {
				d := newSortDirs(t, in.data)
				code, _, stderr := runWeir(context.Background(), "sort", "--input", d.in, "--output", d.out(),
					"--memory", cfg.memory, "--tmp", d.tmp, "--parallelism", cfg.parallelism)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if stderr != "" {
					t.Errorf("stderr is not a terminal but got %q", stderr)
				}
				got, err := os.ReadFile(d.out())
				if err != nil {
					t.Fatal(err)
				}
				if want := oracle.SortLines(in.data); !bytes.Equal(got, want) {
					t.Fatalf("output differs from the oracle: %d bytes, want %d", len(got), len(want))
				}
				if gnu, ok := gnuSort(t, d.in); ok && !bytes.Equal(got, gnu) {
					t.Fatalf("output differs from LC_ALL=C sort: %d bytes, want %d", len(got), len(gnu))
				}
				d.checkClean(t, true)
			})
		}
	}
}

// longLines returns n lines, some of them longer than the read and write buffers
// and the memory segments of a small --memory.
func longLines(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 6))
	var buf []byte
	for range n {
		l := r.IntN(100)
		if r.IntN(10) == 0 {
			l = 4000 + r.IntN(20000)
		}
		for range l {
			buf = append(buf, byte('a'+r.IntN(3)))
		}
		buf = append(buf, '\n')
	}
	return buf
}

// randomLines returns n lines as WriteRandomLines writes them.
func randomLines(t *testing.T, n int) []byte {
	var b bytes.Buffer
	if err := WriteRandomLines(&b, int64(n)*LineLen, 3); err != nil {
		t.Fatal(err)
	}
	if b.Len() != n*LineLen {
		t.Fatalf("WriteRandomLines wrote %d bytes, want %d", b.Len(), n*LineLen)
	}
	return b.Bytes()
}

func TestSortCommandReplacesOutput(t *testing.T) {
	d := newSortDirs(t, []byte("b\na\n"))
	if err := os.WriteFile(d.out(), []byte("old contents\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runWeir(context.Background(), "sort", "--input", d.in, "--output", d.out(), "--tmp", d.tmp); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _ := os.ReadFile(d.out())
	if string(got) != "a\nb\n" {
		t.Fatalf("output %q, want %q", got, "a\nb\n")
	}
	if fi, _ := os.Stat(d.out()); fi.Mode().Perm() != 0o600 {
		t.Errorf("output mode %v, want the replaced file's 0600", fi.Mode().Perm())
	}
	d.checkClean(t, true)
}

func TestSortCommandErrors(t *testing.T) {
	t.Run("missing-input", func(t *testing.T) {
		d := newSortDirs(t, nil)
		missing := filepath.Join(d.tmp, "no-such-file.txt")
		code, _, stderr := runWeir(context.Background(), "sort", "--input", missing, "--output", d.out(), "--tmp", d.tmp)
		checkFailure(t, code, stderr, missing)
		d.checkClean(t, false)
	})
	t.Run("unwritable-output", func(t *testing.T) {
		d := newSortDirs(t, []byte("b\na\n"))
		// A path under a regular file cannot be created, even by root.
		bad := filepath.Join(d.in, "sorted.txt")
		code, _, stderr := runWeir(context.Background(), "sort", "--input", d.in, "--output", bad, "--tmp", d.tmp)
		checkFailure(t, code, stderr, "create output")
		d.checkClean(t, false)
	})
	t.Run("bad-tmp", func(t *testing.T) {
		d := newSortDirs(t, []byte("b\na\n"))
		code, _, stderr := runWeir(context.Background(), "sort", "--input", d.in, "--output", d.out(), "--tmp", filepath.Join(d.in, "x"))
		checkFailure(t, code, stderr, "spill directory")
		d.checkClean(t, false)
	})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown-flag", []string{"sort", "--input", "a", "--output", "b", "--bogus"}, "unknown flag: --bogus"},
		{"missing-output", []string{"sort", "--input", "a"}, `"output"`},
		{"bad-memory", []string{"sort", "--input", "a", "--output", "b", "--memory", "lots"}, "--memory"},
		{"zero-memory", []string{"sort", "--input", "a", "--output", "b", "--memory", "0"}, "--memory"},
		{"negative-parallelism", []string{"sort", "--input", "a", "--output", "b", "--parallelism", "-2"}, "--parallelism"},
		{"extra-argument", []string{"sort", "--input", "a", "--output", "b", "c"}, "unknown command"},
		{"unknown-command", []string{"frobnicate"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runWeir(context.Background(), tc.args...)
			checkFailure(t, code, stderr, tc.want)
			if !strings.Contains(stderr, "--help") {
				t.Errorf("usage error %q has no hint to --help", stderr)
			}
		})
	}
}

// checkFailure asserts exit status 1 and one line on stderr containing want.
func checkFailure(t *testing.T, code int, stderr, want string) {
	t.Helper()
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !strings.HasPrefix(stderr, "weir: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr %q is not one line starting with \"weir: \"", stderr)
	}
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q does not mention %q", stderr, want)
	}
}
