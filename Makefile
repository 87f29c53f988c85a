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

test:
	$(GO) test ./...

clean:
	rm -f ptrace ptrace-mpi
