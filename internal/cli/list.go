package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/cluster/rest"
)

// newListCommand is `weir list`: the jobs of a JobManager, as `flink list`
// prints them.
func newListCommand() *cobra.Command {
	var (
		rf  restFlags
		all bool
	)
	cmd := &cobra.Command{
		Use:   "list --jobmanager URL",
		Short: "List the running and scheduled jobs of a JobManager (with --all, the ended ones too)",
		Long: "list asks the JobManager at --jobmanager for its jobs and prints those running or restarting and\n" +
			"those scheduled, one a line: start time : job id : name (state), as flink list does.",
		Args: cobra.NoArgs,
	}
	rf.register(cmd)
	cmd.Flags().BoolVarP(&all, "all", "a", false, "list the finished, cancelled and failed jobs too")
	cmd.RunE = runE(func(cmd *cobra.Command) error {
		c, ctx, done := rf.client(cmd)
		defer done()
		out := cmd.OutOrStdout()
		fmt.Fprintln(out, "Waiting for response...")
		jobs, err := c.Jobs(ctx)
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		writeJobList(out, jobs, all)
		return nil
	})
	return cmd
}

// writeJobList prints jobs as flink list does: the running and restarting
// ones, the scheduled ones (CREATED, INITIALIZING) and with all the ended
// ones, each group by start time.
func writeJobList(w io.Writer, jobs []rest.JobOverview, all bool) {
	var running, scheduled, ended []rest.JobOverview
	for _, j := range jobs {
		switch j.State {
		case rest.StateCreated, rest.StateInitializing:
			scheduled = append(scheduled, j)
		case rest.StateFinished, rest.StateCanceled, rest.StateFailed:
			ended = append(ended, j)
		default:
			running = append(running, j)
		}
	}
	group := func(header, none string, jobs []rest.JobOverview) {
		if len(jobs) == 0 {
			fmt.Fprintln(w, none)
			return
		}
		slices.SortStableFunc(jobs, func(a, b rest.JobOverview) int { return cmp.Compare(a.Start, b.Start) })
		fmt.Fprintln(w, header)
		for _, j := range jobs {
			fmt.Fprintf(w, "%s : %s : %s (%s)\n", time.UnixMilli(j.Start).Format("02.01.2006 15:04:05"), j.ID, j.Name, j.State)
		}
		fmt.Fprintln(w, "--------------------------------------------------------------")
	}
	group("------------------ Running/Restarting Jobs -------------------", "No running jobs.", running)
	group("----------------------- Scheduled Jobs -----------------------", "No scheduled jobs.", scheduled)
	if all {
		group("---------------------- Terminated Jobs -----------------------", "No terminated jobs.", ended)
	}
}
