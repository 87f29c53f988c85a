package report

// sampleReport is a hand-made report with every section filled, with
// values that are consistent with one another (ratios are the ns values
// divided by thread time, POP efficiencies follow TALP's formulas from the
// components), so tests can recompute what renderers must show.
func sampleReport() *Report {
	const T = 10_000_000 // elapsed per process, 10 ms
	r := &Report{Schema: SchemaVersion}
	r.Trace = TraceInfo{Dir: "/tmp/halo", Producer: "ptrace gen", Processes: 2, Threads: 8, Events: 123456,
		Bytes: 3 << 20, FirstNS: 1_000_000, LastNS: 11_000_000, DurationNS: T, Hosts: 1,
		Warnings: &Warnings{Count: 2, First: []string{"rank 1: no end frame", "rank 1: dropped 3 events"}}}
	r.ClockSync = &ClockSync{Method: "interpolation+clc", Messages: 400, ViolationsBefore: 17, ViolationsInterpolated: 2, ViolationsAfter: 0,
		MaxCorrectionNS: 12_345, MeanCorrectionNS: 2_100, MinLatencyNS: 1000,
		PerProcess: []ClockProcess{{Rank: 0}, {Rank: 1, OffsetInitNS: 200_000, OffsetFinalNS: 200_400, DriftPPM: 40, MaxCorrectionNS: 12_345, Violations: 17}}}
	r.Breakdown = &Breakdown{ThreadTimeNS: 8 * T, WorkNS: 56_000_000, MPINS: 8_000_000, OverheadNS: 4_000_000, IdlenessNS: 12_000_000,
		IdlenessSerialNS: 5_000_000, IdlenessParallelNS: 7_000_000,
		WorkRatio: 0.7, MPIRatio: 0.1, OverheadRatio: 0.05, IdlenessRatio: 0.15, Class: "HL",
		Interpretation: "idleness dominates non-work: expose more parallelism (finer tasks)",
		Thresholds:     Thresholds{Idleness: 0.1, Overhead: 0.1},
		ForkJoinNS:     300_000, IdleDuringMPINS: 2_400_000, IdleSerialDuringMPINS: 2_100_000,
		Advice: &Advice{Dominant: "imbalance", Text: "load imbalance inside parallel regions dominates", SerialNS: 5_000_000,
			ImbalanceNS: 5_500_000, StarvationNS: 1_500_000, OverheadNS: 4_000_000},
		PerProcess: []ProcessTimes{
			{Rank: 0, Host: "node000", Threads: 4, ThreadTimeNS: 4 * T, WorkNS: 30_000_000, MPINS: 3_000_000, OverheadNS: 2_000_000, IdlenessNS: 5_000_000, Class: "LL",
				ForkJoinNS: 150_000, IdleDuringMPINS: 900_000, IdleSerialDuringMPINS: 800_000},
			{Rank: 1, Host: "node000", Threads: 4, ThreadTimeNS: 4 * T, WorkNS: 26_000_000, MPINS: 5_000_000, OverheadNS: 2_000_000, IdlenessNS: 7_000_000, Class: "HL",
				ForkJoinNS: 150_000, IdleDuringMPINS: 1_500_000, IdleSerialDuringMPINS: 1_300_000},
		}}
	r.POP = &POP{Processes: 2, ThreadsPerProcess: 4, ElapsedNS: T, UsefulNS: 7_000_000, MPINS: 1_000_000, IdleNS: 2_000_000,
		IdleSerialNS: 600_000, IdleLBNS: 900_000, IdleSchedNS: 500_000, MaxNonMPINS: 9_200_000,
		ForkJoinNS: 37_500, IdleDuringMPINS: 300_000, IdleSerialDuringMPINS: 262_500,
		HybridEfficiency: 0.7, MPIParallelEfficiency: 0.9, MPILoadBalance: 0.9 / 0.92, MPICommunicationEfficiency: 0.92,
		OMPParallelEfficiency: 0.8, OMPSerializationEfficiency: 0.94, OMPLoadBalance: 0.55, OMPSchedulingEfficiency: 0.93,
		PerProcess: []POPProcess{
			{Rank: 0, Threads: 4, ElapsedNS: T, UsefulNS: 7_500_000, ForkJoinNS: 37_500, IdleDuringMPINS: 225_000, IdleSerialDuringMPINS: 200_000, OMPParallelEfficiency: 0.85, OMPSerializationEfficiency: 0.95, OMPLoadBalance: 0.92, OMPSchedulingEfficiency: 0.97},
			{Rank: 1, Threads: 4, ElapsedNS: T, UsefulNS: 6_500_000, ForkJoinNS: 37_500, IdleDuringMPINS: 375_000, IdleSerialDuringMPINS: 325_000, OMPParallelEfficiency: 0.75, OMPSerializationEfficiency: 0.93, OMPLoadBalance: 0.45, OMPSchedulingEfficiency: 0.89},
		}}
	r.CriticalPath = &CriticalPath{LengthNS: 6_000_000, RunTimeNS: T, ShareOfRunTime: 0.6, WorkNS: 48_000_000, Parallelism: 8, Nodes: 42, RankCrossings: 3,
		ByKind:      []PathShare{{Name: "task", NS: 5_000_000, Share: 5.0 / 6, Nodes: 38}, {Name: "message", NS: 1_000_000, Share: 1.0 / 6, Nodes: 4}},
		ByConstruct: []PathShare{{Name: "stencil.c:42:9", NS: 5_000_000, Share: 5.0 / 6, Nodes: 38}},
		ByProcess:   []PathShare{{Name: "0", NS: 3_500_000, Share: 3.5 / 6}, {Name: "1", NS: 2_500_000, Share: 2.5 / 6}},
		Longest:     []PathNode{{Rank: 1, Thread: 2, Kind: "task", Construct: "stencil.c:42:9", StartNS: 4_000_000, DurNS: 400_000}},
		Segments: []PathNode{
			{Rank: 0, Thread: 0, Kind: "task", Construct: "stencil.c:42:9", StartNS: 1_000_000, DurNS: 2_000_000},
			{Rank: 0, Thread: 0, Kind: "message", StartNS: 3_000_000, DurNS: 500_000},
			{Rank: 1, Thread: 2, Kind: "task", Construct: "stencil.c:42:9", StartNS: 3_500_000, DurNS: 3_000_000},
			{Rank: 1, Thread: 2, Kind: "message", StartNS: 6_500_000, DurNS: 500_000},
			{Rank: 0, Thread: 1, Kind: "task", Construct: "stencil.c:42:9", StartNS: 7_000_000, DurNS: 0},
		}}
	r.Graph = &Graph{Tasks: 640, Edges: 1800, RemoteEdges: 60, Roots: 16, Leaves: 16, CriticalPathNS: 6_000_000,
		RootPaths: RootPaths{Max: 1, MaxCount: 2, Min: 0.81, MinCount: 1, Mean: 0.93, Median: 0.95, Within4Pct: 9, Histogram: []int64{0, 0, 0, 0, 0, 0, 0, 0, 3, 13}}}
	r.Tasks = &Tasks{Count: 660, Constructs: []Construct{
		{Name: "stencil.c:42:9", Kind: "task", Count: 640, SumNS: 44_800_000, MeanNS: 70_000, MinNS: 40_000, MaxNS: 400_000, Share: 0.97, CreateNS: 900, TasksPerThread: 80,
			Histogram: []int64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 200, 430, 0, 10}},
		{Name: "init.c:7:3", Kind: "task", Count: 20, SumNS: 1_400_000, MeanNS: 70_000, MinNS: 60_000, MaxNS: 80_000, Share: 0.03, CreateNS: 800, TasksPerThread: 2.5,
			Histogram: []int64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20}},
	},
		Findings: []Finding{
			{Severity: "problem", Topic: "load balance", Message: "rank 1 waits 45% of its parallel time for its slowest thread"},
			{Severity: "warning", Topic: "granularity", Message: "init.c:7:3 tasks are created in 800 ns and run 70 µs"},
			{Severity: "info", Topic: "trace", Message: "2 warnings while reading"},
		},
		ReadySeries: &Series{StartNS: 1_000_000, BinNS: 1_000_000, Values: []float64{16, 12, 9.5, 7, 4, 3, 2, 1, 0.5, 0}}}
	r.Anomalies = &Anomalies{Model: "loglog on flops", Alpha: 0.05, Tested: 640, Found: 3,
		Models: []AnomalyModel{{Construct: "stencil.c:42:9", Kind: "loglog", Attribute: "flops", Tasks: 640, Intercept: 0.1, Slope: 1, Scale: 0.05, BoundFactor: 1.4, Found: 3},
			{Construct: "init.c:7:3", Kind: "location", Tasks: 20, Intercept: 11.15, Scale: 0.05, BoundFactor: 1.4}},
		Tasks: []Anomaly{
			{Rank: 1, Thread: 2, Task: 0x10000004, Construct: "stencil.c:42:9", StartNS: 4_000_000, DurNS: 400_000, PredictedNS: 50_000, BoundNS: 70_000, Score: 40, Group: 1},
			{Rank: 1, Thread: 2, Task: 0x10000005, Construct: "stencil.c:42:9", StartNS: 4_400_000, DurNS: 380_000, PredictedNS: 50_000, BoundNS: 70_000, Score: 38, Group: 1},
			{Rank: 0, Thread: 3, Task: 0x3000000a, Construct: "stencil.c:42:9", StartNS: 9_000_000, DurNS: 300_000, PredictedNS: 60_000, BoundNS: 84_000, Score: 31, Group: 2},
		},
		Groups: []AnomalyGroup{{ID: 1, Tasks: 2, Rank: 1, Thread: 2, Threads: 1, StartNS: 4_000_000, EndNS: 4_780_000},
			{ID: 2, Tasks: 1, Rank: 0, Thread: 3, Threads: 1, StartNS: 9_000_000, EndNS: 9_300_000}}}
	return r
}
