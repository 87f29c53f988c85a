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
