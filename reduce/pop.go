package reduce

// TALPRow is one process's raw TALP components, summed over its M threads
// (the simulator's sim.TALP, flattened for transport).
type TALPRow struct {
	Rank      int
	Threads   int   // M_i
	ElapsedNS int64 // T_i
	Useful    int64 // Σ_j T^U_{i,j}
	MPI       int64 // Σ_j T^C_{i,j}
	Idle      int64 // Σ_j T^I_{i,j}
	Serial    int64 // Σ_j (T^I_{i,j} − Σ_p T^I_{i,j,p})
	LB        int64 // M_i · T^{I_lb}_i
	Sched     int64 // M_i · T^{I_sch}_i
	// Raw components inside Idle, for other conventions (sim.TALP).
	ForkJoin        int64 // Σ_j fork/join time (inside Sched)
	IdleInMPI       int64 // Σ_j non-work while another thread is in MPI
	IdleInMPISerial int64 // the part of IdleInMPI inside Serial
}

// ProcessPOP is one process's averages (seconds of an average thread, in ns)
// and OpenMP efficiencies.
type ProcessPOP struct {
	Rank                                 int
	Threads                              int
	T, U, C, I, ISerial, ILB, ISched     float64
	ForkJoin, IdleInMPI, IdleInMPISerial float64
	OMPEff, OMPSerial, OMPLB, OMPSched   float64
}

// POP holds TALP's hybrid efficiencies over all processes and the
// components they come from.
type POP struct {
	N                                    int
	MeanThreads                          float64
	T, U, C, I, ISerial, ILB, ISched     float64 // T^k: averages over processes of per-thread averages
	ForkJoin, IdleInMPI, IdleInMPISerial float64 // the same averages of the raw components
	MaxNonMPI                            float64 // max_i (T_i − T_i^M)
	HybridEff                            float64
	MPIEff, MPILB, MPIComm               float64
	OMPEff, OMPSerial, OMPLB, OMPSched   float64
	PerProcess                           []ProcessPOP
}

// ComputePOP applies the formulas of seed talp-pop-hybrid-metrics.txt to
// per-process components, in process order (so the floating-point result
// does not depend on how processes were spread over analysis ranks).
//
// Notes on the seed's text: T^{I_serial}_i divides by N in the seed, a typo
// for M (every other per-process average divides by M); T in the efficiency
// formulas is the average process time T = Σ_i T_i / N; T^M is the seed's
// T^C. With M = 1, T^I = 0 and Hyb_Eff = MPI_Eff, as the seed states.
func ComputePOP(rows []TALPRow) POP {
	var p POP
	p.N = len(rows)
	if p.N == 0 {
		return p
	}
	var sT, sU, sC, sI, sSer, sLB, sSch, sM, sFJ, sIM, sIMS float64
	p.PerProcess = make([]ProcessPOP, len(rows))
	for k, r := range rows {
		M := float64(max(r.Threads, 1))
		q := ProcessPOP{Rank: r.Rank, Threads: r.Threads,
			T: float64(r.ElapsedNS), U: float64(r.Useful) / M, C: float64(r.MPI) / M, I: float64(r.Idle) / M,
			ISerial: float64(r.Serial) / M, ILB: float64(r.LB) / M, ISched: float64(r.Sched) / M,
			ForkJoin: float64(r.ForkJoin) / M, IdleInMPI: float64(r.IdleInMPI) / M, IdleInMPISerial: float64(r.IdleInMPISerial) / M}
		// Per-process OpenMP efficiencies: the seed's formulas with T = T_i.
		q.OMPEff = ratio(q.T-q.I, q.T)
		q.OMPSerial = ratio(q.T-q.ISerial, q.T)
		q.OMPLB = ratio(q.T-q.ISerial-q.ILB, q.T-q.ISerial)
		q.OMPSched = ratio(q.T-q.ISerial-q.ILB-q.ISched, q.T-q.ISerial-q.ILB)
		p.PerProcess[k] = q
		sT += q.T
		sU += q.U
		sC += q.C
		sI += q.I
		sSer += q.ISerial
		sLB += q.ILB
		sSch += q.ISched
		sFJ += q.ForkJoin
		sIM += q.IdleInMPI
		sIMS += q.IdleInMPISerial
		sM += M
		if v := q.T - q.C; k == 0 || v > p.MaxNonMPI {
			p.MaxNonMPI = v
		}
	}
	N := float64(p.N)
	p.MeanThreads = sM / N
	p.T, p.U, p.C, p.I = sT/N, sU/N, sC/N, sI/N
	p.ISerial, p.ILB, p.ISched = sSer/N, sLB/N, sSch/N
	p.ForkJoin, p.IdleInMPI, p.IdleInMPISerial = sFJ/N, sIM/N, sIMS/N
	T := p.T
	// OpenMP metrics.
	p.OMPSerial = ratio(T-p.ISerial, T)                               // OMP_Serial = (T − T^{I_serial}) / T
	p.OMPLB = ratio(T-p.ISerial-p.ILB, T-p.ISerial)                   // OMP_LB = (T − T^{I_serial} − T^{I_lb}) / (T − T^{I_serial})
	p.OMPSched = ratio(T-p.ISerial-p.ILB-p.ISched, T-p.ISerial-p.ILB) // OMP_Sched = (T − I_ser − I_lb − I_sch) / (T − I_ser − I_lb)
	p.OMPEff = ratio(T-p.I, T)                                        // OMP_Eff = (T − T^I) / T
	// MPI metrics (hybrid model).
	p.MPIEff = ratio(T-p.C, T)          // MPI_Eff = (T − T^M) / T
	p.MPILB = ratio(T-p.C, p.MaxNonMPI) // MPI_LB = (T − T^M) / max_i (T_i − T_i^M)
	p.MPIComm = ratio(p.MaxNonMPI, T)   // MPI_Comm = max_i (T_i − T_i^M) / T
	p.HybridEff = ratio(p.U, T)         // Hyb_Eff = T^U / T
	return p
}

// ratio is a/b; 1 when b is 0 (nothing to lose). Rounding noise just
// outside [0,1] is clipped; anything further out is left for tests to see.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 1
	}
	r := a / b
	switch {
	case r < 0 && r > -1e-12:
		return 0
	case r > 1 && r < 1+1e-12:
		return 1
	}
	return r
}
