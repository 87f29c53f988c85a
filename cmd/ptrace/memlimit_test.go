package main

import "testing"

// --memory-limit is the node's: under mpirun each of the node's analysis
// processes gets its share, as the default's 80 % of the machine is
// shared, and a lone process gets it all.
func TestMemoryLimitSharedByTheNode(t *testing.T) {
	for _, k := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"} {
		t.Setenv(k, "")
	}
	for _, c := range []struct {
		local string
		want  int64
	}{{"", 8 << 30}, {"4", 2 << 30}, {"3", (8 << 30) / 3}} {
		t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", c.local)
		got, err := memoryLimit("8GiB")
		if err != nil || got != c.want {
			t.Errorf("8GiB with %q processes on the node: %d (%v), want %d", c.local, got, err, c.want)
		}
	}
	if _, err := memoryLimit("eight"); err == nil {
		t.Error("--memory-limit eight: no error")
	}
}
