# Build ptrace (pure Go) and ptrace-mpi (cgo over the system MPI).
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all ptrace ptrace-mpi test cross fmt-check clean collector examples examples-real

all: ptrace ptrace-mpi

# Static (cgo off): nothing in it needs C, the binary runs on a cluster
# whose C library is older than the build machine's, and it maps no libc
# (1.7 MB less resident memory per process).
ptrace:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o ptrace ./cmd/ptrace

# cgo compiles and links through the MPI's compiler wrapper, so it builds
# against whichever MPI the job runs: Open MPI, MPICH, Intel MPI, MVAPICH
# (MPICC=mpicc.mpich, MPICC=mpiicc; Cray: MPICC=cc).
ptrace-mpi:
	CC=$(MPICC) $(GO) build -tags mpi -ldflags "$(LDFLAGS)" -o ptrace-mpi ./cmd/ptrace

# The full suite: pure-Go tests, then the MPI backend and everything that runs
# under mpirun (needs libopenmpi-dev). Under CI=true, tests that need a tool
# (mpirun, clang, chromium) fail instead of skipping when it is missing.
test: fmt-check
	$(GO) vet ./...
	$(GO) test -timeout 20m ./...
	# The decoder's pure-Go group loop, which amd64 with AVX2 does not take.
	$(GO) test -timeout 10m -tags purego ./trace
	CC=$(MPICC) $(GO) vet -tags mpi ./...
	CC=$(MPICC) $(GO) test -timeout 10m -tags mpi ./comm/... ./cmd/... ./driver/...
	$(MAKE) cross

# The analyzer builds where traces are read after the job: a laptop
# (macOS, Windows) and 32-bit platforms, whose int and alignment differ.
cross:
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/ptrace
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/ptrace
	GOOS=linux GOARCH=386 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/ptrace

# gofmt ships beside the go command.
fmt-check:
	@out="$$($(dir $(shell command -v $(GO)))gofmt -l .)"; \
	if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi

clean:
	rm -f ptrace ptrace-mpi
	rm -rf build/collector build/examples

# ---- collector (issue #7): the C library loaded into traced programs -------
# libptrace-omp.so  OMPT tool only (OpenMP programs, no MPI dependency)
# libptrace.so      OMPT tool + PMPI wrappers (built with mpicc)
# libptrace-noop.so OMPT tool with empty callbacks (overhead baseline)
# The OpenMP runtime must be LLVM's libomp (GCC's libgomp loads no OMPT tool).
COLLECTOR_CC ?= clang
MPICC ?= mpicc
COLLECTOR_DIR := build/collector
COLLECTOR_SRC := ompt/collector
COLLECTOR_CFLAGS ?= -O2 -g
COLLECTOR_WARN := -std=c11 -Wall -Wextra -Werror -fPIC -fvisibility=default
COLLECTOR_HDR := $(COLLECTOR_SRC)/collector.h
# omp-tools.h (from libomp-dev): clang's resource dir, /usr/include or any
# installed LLVM; copied alone so that other compilers do not see clang's headers
OMPT_HDR ?= $(firstword $(wildcard $(shell $(COLLECTOR_CC) -print-resource-dir 2>/dev/null)/include/omp-tools.h \
	/usr/include/omp-tools.h /usr/lib/llvm-*/lib/clang/*/include/omp-tools.h))
OMPT_INC := $(COLLECTOR_DIR)/include

collector: $(COLLECTOR_DIR)/libptrace-omp.so $(COLLECTOR_DIR)/libptrace.so $(COLLECTOR_DIR)/libptrace-noop.so

$(OMPT_INC)/omp-tools.h: $(OMPT_HDR)
	@test -n "$(OMPT_HDR)" || { echo "omp-tools.h not found: install libomp-dev (LLVM OpenMP)"; exit 1; }
	@mkdir -p $(OMPT_INC)
	cp $(OMPT_HDR) $@

$(COLLECTOR_DIR)/libptrace-omp.so: $(COLLECTOR_SRC)/core.c $(COLLECTOR_SRC)/ompt_tool.c $(COLLECTOR_SRC)/pthread_wrap.c $(COLLECTOR_HDR) $(OMPT_INC)/omp-tools.h
	@mkdir -p $(COLLECTOR_DIR)
	$(COLLECTOR_CC) $(COLLECTOR_CFLAGS) $(COLLECTOR_WARN) -I$(OMPT_INC) -shared -o $@ \
		$(COLLECTOR_SRC)/core.c $(COLLECTOR_SRC)/ompt_tool.c $(COLLECTOR_SRC)/pthread_wrap.c -ldl -lpthread

$(COLLECTOR_DIR)/libptrace.so: $(COLLECTOR_SRC)/core.c $(COLLECTOR_SRC)/ompt_tool.c $(COLLECTOR_SRC)/mpi_wrap.c $(COLLECTOR_SRC)/mpi_fortran.c $(COLLECTOR_SRC)/pthread_wrap.c $(COLLECTOR_HDR) $(OMPT_INC)/omp-tools.h
	@mkdir -p $(COLLECTOR_DIR)
	OMPI_CC=$(COLLECTOR_CC) MPICH_CC=$(COLLECTOR_CC) $(MPICC) $(COLLECTOR_CFLAGS) $(COLLECTOR_WARN) -I$(OMPT_INC) \
		-DPTR_WITH_MPI -shared -o $@ $(COLLECTOR_SRC)/core.c $(COLLECTOR_SRC)/ompt_tool.c $(COLLECTOR_SRC)/mpi_wrap.c \
		$(COLLECTOR_SRC)/mpi_fortran.c $(COLLECTOR_SRC)/pthread_wrap.c -ldl -lpthread

$(COLLECTOR_DIR)/libptrace-noop.so: $(COLLECTOR_SRC)/noop_tool.c $(OMPT_INC)/omp-tools.h
	@mkdir -p $(COLLECTOR_DIR)
	$(COLLECTOR_CC) $(COLLECTOR_CFLAGS) $(COLLECTOR_WARN) -I$(OMPT_INC) -shared -o $@ $<

# ---- example programs (OpenMP tasks, built with clang + libomp) ------------
EXAMPLES_DIR := build/examples
EXAMPLES_CFLAGS ?= -O2 -g
EXAMPLES_WARN := -std=c11 -Wall -Wextra -Werror -fopenmp
EXAMPLES := imbalance cholesky fib untied_chain untied_fib untied_sort deps_threads
EXAMPLES_MPI := halo_mpi

examples: $(addprefix $(EXAMPLES_DIR)/,$(EXAMPLES) $(EXAMPLES_MPI))

$(EXAMPLES_DIR)/%: examples/%.c
	@mkdir -p $(EXAMPLES_DIR)
	$(COLLECTOR_CC) $(EXAMPLES_CFLAGS) $(EXAMPLES_WARN) -o $@ $< -lm

$(EXAMPLES_DIR)/halo_mpi: examples/halo_mpi.c
	@mkdir -p $(EXAMPLES_DIR)
	OMPI_CC=$(COLLECTOR_CC) MPICH_CC=$(COLLECTOR_CC) $(MPICC) $(EXAMPLES_CFLAGS) $(EXAMPLES_WARN) -o $@ $< -lm

# ---- programs as users usually compile them (issue #13) --------------------
# gcc and gfortran (GCC's libgomp: ptrace record runs them with LLVM's libomp),
# clang++ -O3 (C++ names), mpifort (Fortran MPI bindings). Apart from
# "examples" so that the C examples build without a Fortran compiler.
GCC ?= gcc
GFORTRAN ?= gfortran
CLANGXX ?= clang++
MPIFORT ?= mpifort
EXAMPLES_REAL := cholesky_gcc tasks_f tasks_cpp halo_mpi_f pingpong_f08

examples-real: $(addprefix $(EXAMPLES_DIR)/,$(EXAMPLES_REAL))

$(EXAMPLES_DIR)/cholesky_gcc: examples/cholesky.c
	@mkdir -p $(EXAMPLES_DIR)
	$(GCC) $(EXAMPLES_CFLAGS) $(EXAMPLES_WARN) -o $@ $< -lm

$(EXAMPLES_DIR)/tasks_f: examples/tasks_f.f90
	@mkdir -p $(EXAMPLES_DIR)/mod-tasks_f
	$(GFORTRAN) -O2 -g -Wall -Werror -fopenmp -J $(EXAMPLES_DIR)/mod-tasks_f -o $@ $<

$(EXAMPLES_DIR)/tasks_cpp: examples/tasks_cpp.cpp
	@mkdir -p $(EXAMPLES_DIR)
	$(CLANGXX) -O3 -g -std=c++17 -Wall -Wextra -Werror -fopenmp -o $@ $<

$(EXAMPLES_DIR)/halo_mpi_f: examples/halo_mpi_f.f90
	@mkdir -p $(EXAMPLES_DIR)/mod-halo_mpi_f
	OMPI_FC=$(GFORTRAN) $(MPIFORT) -O2 -g -Wall -Werror -fopenmp -J $(EXAMPLES_DIR)/mod-halo_mpi_f -o $@ $<

$(EXAMPLES_DIR)/pingpong_f08: examples/pingpong_f08.f90
	@mkdir -p $(EXAMPLES_DIR)/mod-pingpong_f08
	OMPI_FC=$(GFORTRAN) $(MPIFORT) -O2 -g -Wall -Werror -J $(EXAMPLES_DIR)/mod-pingpong_f08 -o $@ $<
