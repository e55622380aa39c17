package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weirdata/weir/dataset"
)

// printPlan writes a job's plan, indented under a title: the tree of
// Plan.Text with what each operator did, as weir explain --analyze prints it.
func printPlan(w io.Writer, res *dataset.Result) {
	fmt.Fprintln(w, "plan:")
	for _, line := range strings.Split(strings.TrimRight(res.Plan.Text(), "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// printMetrics writes one row per task (a chain of operators) with what its
// subtasks did together: records in and out, the slowest subtask's wall time,
// the busy time summed over subtasks, and bytes spilled.
func printMetrics(w io.Writer, res *dataset.Result) {
	fmt.Fprintln(w, "metrics:")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  task\tsubtasks\trecords in\trecords out\twall\tbusy\tspilled\t")
	for _, v := range res.Metrics.Vertices {
		t := v.Total()
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\t%s\t%s\t\n", shorten(v.Name, 60), len(v.Subtasks),
			t.RecordsIn, t.RecordsOut, t.Wall.Round(time.Millisecond), t.Busy.Round(time.Millisecond), humanBytes(t.Spilled))
	}
	tw.Flush()
	fmt.Fprintf(w, "  peak managed memory: %s\n", humanBytes(res.Metrics.PeakMemory))
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
