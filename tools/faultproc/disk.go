package faultproc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

// A real full disk, from outside (proc_disk_full): the faulted Job runs in
// a mount namespace of its own (unshare(1); a user namespace maps the
// harness's user to root there, so mounting needs no privilege outside),
// with its workspace on a tmpfs a few MB larger than the workspace, and the
// harness fills that tmpfs mid-group by writing through the Job's own view
// of the file system (/proc/<pid>/root) until ENOSPC. The mounts die with
// the Job; its continuation gets a fresh workspace, as a fresh runner would.

// diskRoom is the small disk's room beyond the workspace at the Job's start:
// enough for group 1 (its commits, its checks' output), filled at group 2.
const diskRoom = 8 << 20

// diskScript mounts the small disk at stage, copies the workspace onto it,
// puts it over the workspace, and becomes the Job. The workspace is a
// folder of the disk, so the filler (at the disk's top) is outside the
// Job's work tree.
const diskScript = `set -e
ws=$1 stage=$2 size=$3
shift 3
mount -t tmpfs -o size="$size" roadmap-small-disk "$stage"
mkdir "$stage/ws"
cp -a "$ws/." "$stage/ws/"
mount --bind "$stage/ws" "$ws"
exec "$@"
`

var unshareArgs = []string{"--user", "--map-root-user", "--mount", "--propagation", "private"}

// smallDisk is one Job's small disk.
type smallDisk struct {
	stage, ws string
	size      int64
}

// newSmallDisk sizes a small disk for workspace ws, staged at stage (an
// empty folder outside ws; canMountSmallDisk made it).
func newSmallDisk(stage, ws string) (*smallDisk, error) {
	used := int64(0)
	err := filepath.WalkDir(ws, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		used += (info.Size() + 4095) / 4096 * 4096 // tmpfs gives each file whole pages
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &smallDisk{stage: stage, ws: ws, size: used + diskRoom}, nil
}

// canMountSmallDisk says why this machine cannot play a full disk from
// outside: no unshare(1), or a kernel that refuses the user namespace or
// the mount in it. The history then fails saying so: a CI that cannot play
// it must not pass it silently.
func canMountSmallDisk(stage string) error {
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return err
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return fmt.Errorf("proc_disk_full needs unshare(1) to give the Job a small disk of its own: %w", err)
	}
	args := append(append([]string(nil), unshareArgs...), "sh", "-c", `mount -t tmpfs -o size=1m roadmap-probe "$1"`, "sh", stage)
	if out, err := exec.Command(unshare, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("proc_disk_full needs a user and mount namespace with a tmpfs (unshare %v): %v: %s", unshareArgs, err, out)
	}
	return nil
}

// wrap is the program and arguments that run binary with args on the
// small disk.
func (d *smallDisk) wrap(binary string, args []string) (string, []string) {
	w := append(append([]string(nil), unshareArgs...), "sh", "-c", diskScript, "sh", d.ws, d.stage, strconv.FormatInt(d.size, 10), binary)
	return "unshare", append(w, args...)
}

// fill writes a file on the small disk of process pid, through its own
// view of the file system, until the disk is full.
func (d *smallDisk) fill(pid int) error {
	path := filepath.Join(fmt.Sprintf("/proc/%d/root", pid), d.stage, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("the small disk: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for written := int64(0); written <= d.size; {
		n, err := f.Write(buf)
		written += int64(n)
		if errors.Is(err, syscall.ENOSPC) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("the small disk: %w", err)
		}
	}
	return fmt.Errorf("the small disk: wrote %d bytes to %s and it is not full (not the Job's tmpfs?)", d.size, path)
}

// fillDisk fills the running Job's small disk (the model hook of
// proc_disk_full calls it at the chosen moment).
func (p *plife) fillDisk() {
	p.mu.Lock()
	cmd := p.cur
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil || p.disk == nil {
		p.note("no Job on a small disk to fill")
		return
	}
	if err := p.disk.fill(cmd.Process.Pid); err != nil {
		p.note("%v", err)
		return
	}
	p.filled.Store(true)
	p.note("the Job's disk filled")
}
