package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newExportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "export --perfetto FILE DIR",
		Short: "Export a trace's timeline for Perfetto / chrome://tracing",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("export: not implemented yet (the timeline export arrives with issue #8)")
		},
	}
}
