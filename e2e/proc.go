//go:build unix

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Process is a step process act is running.
type Process struct {
	PID  int
	Comm string   // the kernel's short name, e.g. "roadmap", "sleep", "bash"
	Args []string // the command line
}

// StepProcesses returns act's child processes now. On the host act starts
// each step's entry process as its direct child, so with `exec` in a step's
// script this is the program itself (the process the runner would signal).
// It reads /proc, so it works on Linux only.
func (s *Started) StepProcesses() ([]Process, error) {
	return childProcesses("/proc", s.Pid())
}

func childProcesses(procRoot string, parent int) ([]Process, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "stat"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ESRCH) {
			// Gone since the listing (a process that exits between the two
			// reads answers ESRCH, not ENOENT), or not ours to read.
			continue
		} else if err != nil {
			return nil, fmt.Errorf("read process %d: %w", pid, err)
		}
		comm, ppid, ok := parseStat(string(stat))
		if !ok || ppid != parent {
			continue
		}
		p := Process{PID: pid, Comm: comm}
		if cmdline, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "cmdline")); err == nil {
			p.Args = strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

// parseStat reads comm and ppid from /proc/<pid>/stat: "pid (comm) state
// ppid ...". comm may hold spaces and parentheses, so it ends at the last ')'.
func parseStat(stat string) (comm string, ppid int, ok bool) {
	open := strings.IndexByte(stat, '(')
	end := strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return "", 0, false
	}
	return stat[open+1 : end], ppid, true
}
