package main

import (
	"debug/elf"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// What the binary must not link: code every run would hold resident.
//
// Once reflect's Method or MethodByName is reachable, the linker keeps
// every exported method of every type converted to an interface: 2.7 MB
// more binary, resident in every run where the kernel maps the binary's
// page-cache folios whole. html/template's execution reached it; so does
// cobra's when a usage, help or version template is set. crypto/rand
// links the FIPS module (0.2 MB) for run identities and temporary names
// that need to be unique, not secret.
func TestBinaryLinks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the ELF symbol table")
	}
	f, err := elf.Open(filepath.Join(binDir, "ptrace"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		switch s.Name {
		case "reflect.Value.Method", "reflect.Value.MethodByName", "reflect.(*rtype).MethodByName":
			t.Errorf("the binary links %s: the linker keeps every exported method", s.Name)
		}
		if strings.HasPrefix(s.Name, "crypto/") {
			t.Fatalf("the binary links %s", s.Name)
		}
	}
}
