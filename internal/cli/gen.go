package cli

import "github.com/spf13/cobra"

// newGenCommand is `weir gen`, the parent of the data generators.
func newGenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Generate input data for jobs and benchmarks",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newGenLinesCommand())
	cmd.AddCommand(newGenGraphCommand(), newGenPointsCommand())
	cmd.AddCommand(newGenTPCHCommand())
	cmd.AddCommand(newGenNexmarkCommand())
	return cmd
}
