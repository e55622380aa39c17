package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// separator ends a case's input and starts its expected output.
const separator = "----"

// Case is one case of a RunFile file:
//
//	cmd key=value key2=(a, b) flag
//	input lines
//	----
//	expected output
type Case struct {
	// Pos is "file:line" of the case's command line.
	Pos string
	// Cmd is the first word of the command line.
	Cmd string
	// Args are the command's arguments: key=value, key=(a, b) (the value is
	// "a, b") or a bare key (the value is "").
	Args map[string]string
	// Input is the lines between the command and the separator, joined by
	// newlines, without a final one ("" when there are none).
	Input string
	// Expected is the expected output in the file, each line ending in a
	// newline.
	Expected string

	cmdLine string
	input   []string
	got     string
	ran     bool
}

// Arg returns the value of argument key and whether the command has it.
func (c *Case) Arg(key string) (string, bool) {
	v, ok := c.Args[key]
	return v, ok
}

// item is a case of a file or one line kept as it is (a comment or blank line).
type item struct {
	line string
	c    *Case
}

// RunFile runs fn on every case of the datadriven file at path, each as a
// subtest named "file:line", and compares what fn returns (a final newline is
// added when missing) with the case's expected output, reporting a mismatch
// like Check does. With -rewrite it writes the file again instead, comments,
// commands and inputs as they were and every case that ran with fn's output.
func RunFile(t *testing.T, path string, fn func(t *testing.T, d *Case) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v", err)
	}
	items, err := parse(path, string(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		c := it.c
		if c == nil {
			continue
		}
		t.Run(filepath.Base(path)+c.Pos[len(path):], func(t *testing.T) {
			c.got = withNewline(fn(t, c))
			c.ran = true
			if msg := c.mismatch(); msg != "" && !*rewrite {
				t.Errorf("%s\nrewrite with: %s", msg, rewriteCommand(t))
			}
		})
	}
	if *rewrite {
		if err := writeFile(path, format(items)); err != nil {
			t.Fatal(err)
		}
	}
}

// mismatch describes how the output of a case that ran differs from the
// expected one, "" when it does not.
func (c *Case) mismatch() string {
	if !c.ran || c.got == c.Expected {
		return ""
	}
	return fmt.Sprintf("golden: %s: %s: output differs from the file:\n%s", c.Pos, c.cmdLine, Diff(c.Expected, c.got))
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// parse reads a datadriven file: comment and blank lines, and cases.
func parse(path, data string) ([]item, error) {
	lines := strings.Split(data, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var items []item
	for i := 0; i < len(lines); {
		line := lines[i]
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			items = append(items, item{line: line})
			i++
			continue
		}
		c := &Case{Pos: fmt.Sprintf("%s:%d", path, i+1), cmdLine: line}
		var err error
		if c.Cmd, c.Args, err = parseCommand(line); err != nil {
			return nil, fmt.Errorf("golden: %s: %w", c.Pos, err)
		}
		for i++; i < len(lines) && lines[i] != separator; i++ {
			c.input = append(c.input, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("golden: %s: no %s line after the command", c.Pos, separator)
		}
		c.Input = strings.Join(c.input, "\n")
		i++
		var out []string
		if i < len(lines) && lines[i] == separator {
			// Doubled separators: the output runs to the next pair.
			start := i + 1
			for i++; i < len(lines) && (lines[i] != separator || i+1 >= len(lines) || lines[i+1] != separator); i++ {
				out = append(out, lines[i])
			}
			if i == len(lines) {
				return nil, fmt.Errorf("golden: %s:%d: output has no closing %s %s", path, start, separator, separator)
			}
			i += 2
		} else {
			for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				out = append(out, lines[i])
			}
		}
		if len(out) > 0 {
			c.Expected = strings.Join(out, "\n") + "\n"
		}
		items = append(items, item{c: c})
	}
	return items, nil
}

// parseCommand splits "cmd a=1 b=(x, y) c" into the command and its arguments.
func parseCommand(line string) (cmd string, args map[string]string, err error) {
	s := strings.TrimSpace(line)
	cmd, s, _ = strings.Cut(s, " ")
	args = map[string]string{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		end := strings.IndexAny(s, " =")
		if end < 0 {
			args[s] = ""
			break
		}
		key := s[:end]
		if s[end] == ' ' {
			args[key] = ""
			s = s[end:]
			continue
		}
		s = s[end+1:]
		if strings.HasPrefix(s, "(") {
			closeAt := strings.IndexByte(s, ')')
			if closeAt < 0 {
				return "", nil, fmt.Errorf("argument %s: no closing parenthesis", key)
			}
			args[key] = s[1:closeAt]
			s = s[closeAt+1:]
			continue
		}
		v, rest, _ := strings.Cut(s, " ")
		args[key] = v
		s = rest
	}
	return cmd, args, nil
}

// format writes items back as a datadriven file, each case that ran with the
// output it produced.
func format(items []item) string {
	var b strings.Builder
	for k, it := range items {
		c := it.c
		if c == nil {
			b.WriteString(it.line)
			b.WriteByte('\n')
			continue
		}
		out := c.Expected
		if c.ran {
			out = c.got
		}
		b.WriteString(c.cmdLine)
		b.WriteByte('\n')
		for _, l := range c.input {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		if hasBlankLine(out) {
			fmt.Fprintf(&b, "%s\n%s\n%s%s\n%s\n", separator, separator, out, separator, separator)
		} else {
			fmt.Fprintf(&b, "%s\n%s", separator, out)
		}
		// A single-separator output ends at a blank line: keep one before
		// whatever follows.
		if k+1 < len(items) && (items[k+1].c != nil || strings.TrimSpace(items[k+1].line) != "") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// hasBlankLine reports whether out has an empty line or one of only spaces,
// which would end a single-separator output early.
func hasBlankLine(out string) bool {
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if out != "" && strings.TrimSpace(l) == "" {
			return true
		}
	}
	return false
}
