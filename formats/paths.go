package formats

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Expand lists the files an input path names: the file itself; every file of a
// directory whose name ends in ext ("" for any; names starting with "." or "_"
// are skipped, as Hadoop-style writers use them for metadata), sorted by name;
// or the files a glob pattern matches, sorted. A directory or glob that names no
// file is an error.
func Expand(path, ext string) ([]string, error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || !strings.HasSuffix(n, ext) {
				continue
			}
			out = append(out, filepath.Join(path, n))
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("directory %s holds no *%s file", path, ext)
		}
		return out, nil
	case err == nil:
		return []string{path}, nil
	case errors.Is(err, os.ErrNotExist) && strings.ContainsAny(path, "*?["):
		out, gerr := filepath.Glob(path)
		if gerr != nil {
			return nil, fmt.Errorf("glob %s: %w", path, gerr)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("glob %s: no files match", path)
		}
		slices.Sort(out)
		return out, nil
	default:
		return nil, err
	}
}

// PartPath returns the file subtask i of n writes for a sink at path: path
// itself when n is 1, else path/part-0000i.ext in the directory path, which it
// creates (the Sink contract).
func PartPath(path string, i, n int, ext string) (string, error) {
	if n < 1 || i < 0 || i >= n {
		return "", fmt.Errorf("subtask %d of %d out of range", i, n)
	}
	if n == 1 {
		return path, nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(path, fmt.Sprintf("part-%05d%s", i, ext)), nil
}

// NotRegular returns why path cannot be read as an input file when it is not
// a regular file (a named pipe, a device, a socket): its size is unknown and
// its data cannot be read again, which splits and resumed reads need. It
// returns nil for a regular file, and for a path it cannot stat (opening it
// then reports why). It stats without opening: opening a named pipe waits
// for a writer.
func NotRegular(path string) error {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch m := st.Mode(); {
	case m&os.ModeNamedPipe != 0:
		kind = "a named pipe"
	case m&os.ModeCharDevice != 0:
		kind = "a character device"
	case m&os.ModeDevice != 0:
		kind = "a device"
	case m&os.ModeSocket != 0:
		kind = "a socket"
	case m.IsDir():
		kind = "a directory"
	}
	return fmt.Errorf("%s is %s: its size is unknown and it cannot be read again; write its data to a file first", path, kind)
}
