package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newCancelCommand is `weir cancel JOBID`: cancel a job of a JobManager.
func newCancelCommand() *cobra.Command {
	var rf restFlags
	cmd := &cobra.Command{
		Use:   "cancel JOBID --jobmanager URL",
		Short: "Cancel a job of a JobManager",
		Long:  "cancel asks the JobManager at --jobmanager to cancel the job JOBID (32 hexadecimal digits), without a savepoint.",
		Args:  cobra.ExactArgs(1),
	}
	rf.register(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		jid := args[0]
		return runE(func(cmd *cobra.Command) error {
			c, ctx, done := rf.client(cmd)
			defer done()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Cancelling job %s.\n", jid)
			if err := c.Cancel(ctx, jid); err != nil {
				return fmt.Errorf("cancel %s: %w", jid, err)
			}
			fmt.Fprintf(out, "Cancelled job %s.\n", jid)
			return nil
		})(cmd, args)
	}
	return cmd
}
