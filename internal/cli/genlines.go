package cli

import (
	"bufio"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// LineLen is the length of a line WriteRandomLines writes, '\n' included.
const LineLen = 100

// WriteRandomLines writes size bytes (rounded down to whole lines) of lines of 99
// random printable ASCII characters and '\n', the same for the same seed. It is
// the input of the sort benchmarks.
func WriteRandomLines(w io.Writer, size int64, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	bw := bufio.NewWriterSize(w, 1<<20)
	var line [LineLen]byte
	line[LineLen-1] = '\n'
	for n := size / LineLen; n > 0; n-- {
		var x uint64
		for i := 0; i < LineLen-1; i++ {
			if i%8 == 0 {
				x = r.Uint64()
			}
			// the high word of x*95 is uniform in [0, 95); the low word feeds the next byte
			hi, lo := bits.Mul64(x, 95)
			line[i] = ' ' + byte(hi)
			x = lo
		}
		if _, err := bw.Write(line[:]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// newGenLinesCommand is `weir gen lines`, which writes the sort benchmark's input.
func newGenLinesCommand() *cobra.Command {
	var output string
	var size Size
	var seed uint64
	cmd := &cobra.Command{
		Use:   "lines --out FILE --size SIZE [--seed N]",
		Short: "Write random 100-byte lines of printable ASCII (the sort benchmark's input)",
		Long: `Write SIZE bytes (rounded down to whole lines) of lines of 99 random printable
ASCII characters and a newline. The same seed gives the same file. The file is
written under a temporary name and renamed when complete.`,
		Args: cobra.NoArgs,
		RunE: runE(func(*cobra.Command) error {
			if size < 0 {
				return &usageError{err: fmt.Errorf("--size must not be negative")}
			}
			return writeAtomically(output, func(w io.Writer) error {
				return WriteRandomLines(w, int64(size), seed)
			})
		}),
	}
	cmd.Flags().StringVar(&output, "out", "", "file to write (required)")
	cmd.Flags().Var(&size, "size", "bytes to write, e.g. 2GB or 64MiB (required)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed")
	_ = cmd.MarkFlagRequired("out")
	_ = cmd.MarkFlagRequired("size")
	return cmd
}

// writeAtomically writes a file through write under a temporary name next to path
// and renames it to path when write succeeds; on error nothing is left.
func writeAtomically(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".weir-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
