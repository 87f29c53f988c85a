package mpi

import "testing"

func TestUnderLauncher(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"HOME": "/root", "SLURM_JOB_ID": "7"}, false}, // a batch script, not a step
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "4"}, true},
		{map[string]string{"PMI_SIZE": "2", "PMI_RANK": "1"}, true},
		{map[string]string{"PMIX_RANK": "0"}, true},
		{map[string]string{"SLURM_JOB_ID": "7", "SLURM_STEP_NUM_TASKS": "8"}, true},
	} {
		got := underLauncher(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if got != tc.want {
			t.Errorf("underLauncher(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

func TestLauncherProcs(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want int
	}{
		{map[string]string{}, 0},
		{map[string]string{"SLURM_JOB_ID": "7", "SLURM_NTASKS": "64"}, 0}, // a batch script
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "0"}, 4},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "1"}, 1},
		{map[string]string{"PMI_SIZE": "2", "PMI_RANK": "1"}, 2},
		{map[string]string{"PMIX_RANK": "0"}, 1},
		{map[string]string{"PMIX_RANK": "5"}, 6},
		{map[string]string{"SLURM_STEP_NUM_TASKS": "8"}, 8},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "x", "PMI_RANK": "2"}, 3},
	} {
		got := launcherProcs(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if got != tc.want {
			t.Errorf("launcherProcs(%v) = %d, want %d", tc.env, got, tc.want)
		}
	}
}

func TestLauncherRank(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want int
		ok   bool
	}{
		{map[string]string{}, 0, false},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "3"}, 3, true},
		{map[string]string{"PMI_SIZE": "2", "PMI_RANK": "1"}, 1, true},
		{map[string]string{"PMIX_RANK": "0"}, 0, true},
		{map[string]string{"SLURM_STEP_NUM_TASKS": "8", "SLURM_PROCID": "5"}, 5, true},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "x", "PMI_RANK": "-1"}, 0, false},
	} {
		got, ok := launcherRank(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if got != tc.want || ok != tc.ok {
			t.Errorf("launcherRank(%v) = %d, %v; want %d, %v", tc.env, got, ok, tc.want, tc.ok)
		}
	}
}
