package trace

import (
	"encoding/json"
	"fmt"
	"os"
)

// Manifest is the small JSON file beside the process files. It lets tools
// size and partition a trace without opening every file. Producers that
// cannot write it (a crashed job) leave a trace that still opens without it.
type Manifest struct {
	Format   string     `json:"format"`
	Version  int        `json:"version"`
	Ranks    int        `json:"ranks"`
	RunID    string     `json:"run_id,omitempty"` // as in every header (version 2)
	Producer string     `json:"producer,omitempty"`
	Command  []string   `json:"command,omitempty"`
	Files    []FileInfo `json:"files"`
}

// ReadManifest reads and checks a manifest file.
func ReadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Format != FormatName {
		return nil, fmt.Errorf("%s: format %q is not %q", path, m.Format, FormatName)
	}
	if m.Version < MinVersion || m.Version > Version {
		return nil, fmt.Errorf("%s: unsupported format version %d (this ptrace reads versions %d to %d)", path, m.Version, MinVersion, Version)
	}
	return &m, nil
}

// WriteManifest writes m as indented JSON.
func WriteManifest(path string, m *Manifest) error {
	if m.Format == "" {
		m.Format = FormatName
	}
	if m.Version == 0 {
		m.Version = Version
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
