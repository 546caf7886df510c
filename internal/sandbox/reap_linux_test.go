//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Close ends what the boundary started: a command still running in another
// goroutine, writing through a descriptor it opened, is killed before the
// tree is handed back, and no process of the uid is left.
func TestCloseKillsItsProcesses(t *testing.T) {
	needRoot(t)
	ws := workTree(t)
	b, err := Open(context.Background(), Options{Workspace: ws, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	uid := b.UID()
	t.Cleanup(func() { killUID(uid); _ = b.Close() })
	// The descriptor is opened once: handing the file back to root does not
	// stop the writes, only the end of the process does.
	cmd := exec.Command("/bin/sh", "-c", "exec 3>>grow.log; while :; do echo x >&3; sleep 0.005; done")
	cmd.Dir = ws
	b.Confine(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	log := filepath.Join(ws, "grow.log")
	size := func() int64 {
		fi, err := os.Stat(log)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	// Running, and writing: the file grows between two looks.
	first := int64(0)
	for i := 0; i < 2000 && (first == 0 || size() == first); i++ {
		if first == 0 {
			first = size()
		}
		time.Sleep(5 * time.Millisecond)
	}
	if size() <= first || first == 0 {
		t.Fatalf("the command never wrote grow.log (%d bytes)", size())
	}
	// Close finds the command's namespace init (root) as well as the
	// command (the uid's).
	found := boundaryProcesses(uid)
	if !slices.Contains(found, boundaryPID{pid: cmd.Process.Pid, init: true}) {
		t.Errorf("the command's init (pid %d) is not among the boundary's processes %v", cmd.Process.Pid, found)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	after := size()
	time.Sleep(200 * time.Millisecond)
	if later := size(); later != after {
		t.Errorf("grow.log still grows after Close: %d bytes, then %d", after, later)
	}
	if left := uidProcesses(t, uid); len(left) > 0 {
		t.Errorf("processes of uid %d are left after Close:\n%s", uid, strings.Join(left, "\n"))
	}
	late := exec.Command("/bin/true")
	b.Confine(late)
	if err := late.Run(); err == nil || !strings.Contains(err.Error(), "boundary is closed") {
		t.Errorf("a command confined after Close: %v, want it refused", err)
	}
	select {
	case err := <-waited:
		if err == nil {
			t.Error("the killed command reports success")
		}
	case <-time.After(30 * time.Second):
		t.Error("the command's Wait did not return after Close")
	}
}
