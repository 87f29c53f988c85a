module github.com/ptrace-dev/ptrace

go 1.23
