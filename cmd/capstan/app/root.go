package app

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capstan-dev/capstan/pkg/version"
)

// NewCommand is the root `capstan` command with every subcommand.
func NewCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "capstan",
		Short:         "Capstan is a Kubernetes node autoscaler compatible with the Karpenter v1 API",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCommand(), newControllerCommand(), newSimulateCommand(), newExplainCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of capstan",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			switch output {
			case "":
				_, err := fmt.Fprintln(cmd.OutOrStdout(), info)
				return err
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			return fmt.Errorf("unknown output format %q (want json or nothing)", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}
