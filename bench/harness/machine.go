package harness

import (
	"bytes"
	"os"
	"runtime"
	"strings"
)

// Machine describes where a report was measured.
type Machine struct {
	// Cores is runtime.NumCPU().
	Cores int `json:"cores"`
	// CPUModel is the "model name" of /proc/cpuinfo ("unknown" elsewhere).
	CPUModel string `json:"cpu_model"`
	// GoVersion is runtime.Version().
	GoVersion string `json:"go_version"`
	// OS and Arch are runtime.GOOS and runtime.GOARCH.
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// MemoryBytes is MemTotal of /proc/meminfo, 0 when unknown.
	MemoryBytes int64 `json:"memory_bytes"`
}

// ThisMachine describes the running machine.
func ThisMachine() Machine {
	m := Machine{
		Cores: runtime.NumCPU(), CPUModel: "unknown", GoVersion: runtime.Version(),
		OS: runtime.GOOS, Arch: runtime.GOARCH,
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if s := cpuModel(b); s != "" {
			m.CPUModel = s
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if v, ok := statusField(b, "MemTotal:"); ok {
			m.MemoryBytes = v
		}
	}
	return m
}

// cpuModel returns the CPU model of a /proc/cpuinfo text: the first
// "model name" (x86), else "Model", "Hardware" or "cpu model" (other
// architectures).
func cpuModel(b []byte) string {
	for _, key := range []string{"model name", "Model", "Hardware", "cpu model"} {
		for _, line := range bytes.Split(b, []byte("\n")) {
			k, v, ok := strings.Cut(string(line), ":")
			if ok && strings.TrimSpace(k) == key {
				if s := strings.TrimSpace(v); s != "" {
					return s
				}
			}
		}
	}
	return ""
}
