package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/dataset"
)

// TestJobFlagsOnlyOnJobs checks that --memory, --tmp and --parallelism are
// flags of the commands that run jobs and of no other: the data generators
// and the savepoint tools neither list nor take them (weir gen tpch has a --parallelism of its own).
func TestJobFlagsOnlyOnJobs(t *testing.T) {
	root := NewRootCommand()
	var jobs, others []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.Name() != "help" {
			path := c.CommandPath()
			isJob := !strings.HasPrefix(path, "weir gen") && !strings.HasPrefix(path, "weir savepoint") &&
				path != "weir run" && path != "weir explain" && path != "weir jobmanager" && path != "weir taskmanager" &&
				path != "weir list" && path != "weir cancel" && path != "weir stop" &&
				path != "weir completion" && !strings.HasPrefix(path, "weir completion ")
			for _, name := range []string{"memory", "tmp", "parallelism"} {
				f := c.Flags().Lookup(name)
				if isJob && f == nil {
					t.Errorf("%s has no --%s", path, name)
				}
				// a TaskManager's --memory is its process's, shared by its jobs
				if !isJob && f != nil && path != "weir gen tpch" && !(path == "weir taskmanager" && name == "memory") {
					t.Errorf("%s has --%s, but runs no job", path, name)
				}
			}
			if isJob {
				jobs = append(jobs, path)
			} else {
				others = append(others, path)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if root.PersistentFlags().HasFlags() {
		t.Errorf("the root has persistent flags: %v", root.PersistentFlags().FlagUsages())
	}
	for _, want := range []string{"weir sort", "weir tpch", "weir quickstart", "weir run pagerank", "weir explain tpch", "weir explain wordcount"} {
		if !slices.Contains(jobs, want) {
			t.Errorf("no job command %q among %v", want, jobs)
		}
	}
	if !slices.Contains(others, "weir gen lines") {
		t.Errorf("weir gen lines not among the other commands %v", others)
	}
	code, help, _ := runWeir(t.Context(), "gen", "graph", "--help")
	if code != 0 || !strings.Contains(help, "--out") || strings.Contains(help, "--memory") {
		t.Errorf("weir gen graph --help: exit %d, help:\n%s", code, help)
	}
}

// TestErrorLineCountsJoinedErrors builds a program with three build errors
// and checks that the one line the CLI prints is the first of them and says
// that two more were not printed.
func TestErrorLineCountsJoinedErrors(t *testing.T) {
	env := dataset.New(dataset.Options{Parallelism: 1})
	ds := dataset.FromSlice(env, []int{3, 1, 2})
	for range 3 {
		dataset.PartitionByRangeBounds(ds, dataset.Self[int](), []int{2, 1})
	}
	dataset.Collect(ds)
	_, err := env.Execute(t.Context())
	if err == nil {
		t.Fatal("a program with unsorted range bounds ran")
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Fatalf("want three joined build errors, got %v", err)
	}
	first := joined.Unwrap()[0].Error()
	got := errorLine(fmt.Errorf("job: %w", err))
	if want := "job: " + first + " (and 2 more errors)"; got != want {
		t.Errorf("errorLine = %q, want %q", got, want)
	}
	if got := errorLine(errors.Join(errors.New("one"), nil)); got != "one" {
		t.Errorf("errorLine of one joined error = %q, want %q", got, "one")
	}
	if got := errorLine(errors.Join(errors.New("one"), errors.New("two"))); got != "one (and 1 more error)" {
		t.Errorf("errorLine of two = %q", got)
	}
	if got := errorLine(errors.New("line one\nline two")); got != "line one" {
		t.Errorf("errorLine of a two-line error = %q", got)
	}
}
