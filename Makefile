# Build ptrace (pure Go) and ptrace-mpi (cgo over the system MPI).
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all ptrace ptrace-mpi test clean

all: ptrace ptrace-mpi

ptrace:
	$(GO) build -ldflags "$(LDFLAGS)" -o ptrace ./cmd/ptrace

ptrace-mpi:
	$(GO) build -tags mpi -ldflags "$(LDFLAGS)" -o ptrace-mpi ./cmd/ptrace

# The full suite: pure-Go tests, then the MPI backend and everything that runs
# under mpirun (needs libopenmpi-dev). Under CI=true, tests that need a tool
# (mpirun, clang, chromium) fail instead of skipping when it is missing.
test:
	$(GO) vet ./...
	$(GO) test -timeout 20m ./...
	$(GO) vet -tags mpi ./...
	$(GO) test -timeout 10m -tags mpi ./comm/... ./cmd/... ./driver/...

clean:
	rm -f ptrace ptrace-mpi
