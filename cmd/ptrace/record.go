package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newRecordCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "record [-o DIR] -- CMD ARGS...",
		Short: "Run a program with the ptrace collector loaded",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("record: not implemented yet (the collector arrives with issue #7)")
		},
	}
}
