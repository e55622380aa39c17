package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newStopCommand is `weir stop JOBID --savepoint-dir D`: stop a job of a
// JobManager with a savepoint.
func newStopCommand() *cobra.Command {
	var (
		rf  restFlags
		dir string
	)
	cmd := &cobra.Command{
		Use:   "stop JOBID --savepoint-dir D --jobmanager URL",
		Short: "Stop a job of a JobManager with a savepoint",
		Long: "stop asks the JobManager at --jobmanager to take a savepoint of the job JOBID under --savepoint-dir\n" +
			"and to stop the job with it, waits until the savepoint completed (at most --timeout) and prints its path.",
		Args: cobra.ExactArgs(1),
	}
	rf.register(cmd)
	cmd.Flags().StringVarP(&dir, "savepoint-dir", "p", "", "directory (or s3://bucket/prefix) of the savepoint, as the JobManager sees it")
	_ = cmd.MarkFlagRequired("savepoint-dir")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		jid := args[0]
		return runE(func(cmd *cobra.Command) error {
			c, ctx, done := rf.client(cmd)
			defer done()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Suspending job %q with a savepoint.\n", jid)
			trigger, err := c.TriggerSavepoint(ctx, jid, dir, true)
			if err != nil {
				return fmt.Errorf("stop %s: %w", jid, err)
			}
			sp, err := c.WaitSavepoint(ctx, jid, trigger)
			if err != nil {
				return fmt.Errorf("stop %s: %w", jid, err)
			}
			fmt.Fprintf(out, "Savepoint completed. Path: %s\n", sp.Location)
			return nil
		})(cmd, args)
	}
	return cmd
}
