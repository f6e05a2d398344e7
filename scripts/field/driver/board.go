package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// board is one qemu-system-aarch64 machine booted from its card image, on
// the namespace's bridge through its tap, with the agent's virtio serial
// port on a unix socket.
type board struct {
	name, addr, tap, mac string
	img                  string
	dir                  string // sockets and the console log

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	started time.Time
	conn    net.Conn
	rd      *bufio.Reader
	seq     int
}

// qemuArgs is the machine: -M virt, one Cortex-A53, 512 MiB, the card on
// virtio-blk, the LAN on virtio-net, a virtio RNG, the agent's port.
// (The card's fstab raises the boot partition's device timeout: udev is
// slow under TCG.)
func (b *board) qemuArgs(machine, kernel, initrd string) []string {
	return []string{
		"-M", machine, "-cpu", "cortex-a53", "-smp", "1", "-m", "512",
		"-kernel", kernel, "-initrd", initrd,
		"-append", "root=/dev/vda2 rw rootwait console=ttyAMA0 quiet",
		"-drive", "file=" + b.img + ",format=raw,if=none,id=card,cache=writeback",
		"-device", "virtio-blk-pci,drive=card",
		"-netdev", "tap,id=lan,ifname=" + b.tap + ",script=no,downscript=no",
		"-device", "virtio-net-pci,netdev=lan,mac=" + b.mac,
		"-device", "virtio-rng-pci",
		"-device", "virtio-serial-pci",
		"-chardev", "socket,id=agent,path=" + filepath.Join(b.dir, "agent.sock") + ",server=on,wait=off",
		"-device", "virtserialport,chardev=agent,name=ews.agent",
		"-display", "none", "-monitor", "none", "-serial", "stdio",
	}
}

// dumpDTB writes the device tree qemu makes for the machine to path and
// names the PL061's eight lines GPIO0..GPIO7 in it (gpio-line-names), as a
// Pi's device tree names its pins: ews finds the line by that name.
func dumpDTB(b *board, kernel, initrd, path string) error {
	args := append([]string{"-n", "19", "qemu-system-aarch64"}, b.qemuArgs("virt,dumpdtb="+path, kernel, initrd)...)
	if out, err := exec.Command("nice", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("field: qemu dumpdtb: %v: %s", err, out)
	}
	names := []string{"-t", "s", path, "/pl061@9030000", "gpio-line-names"}
	for i := 0; i < 8; i++ {
		names = append(names, "GPIO"+strconv.Itoa(i))
	}
	if out, err := exec.Command("fdtput", names...).CombinedOutput(); err != nil {
		return fmt.Errorf("field: fdtput gpio-line-names: %v: %s", err, out)
	}
	return nil
}

// boot starts qemu (nice 19: the host's cores are shared) with the device tree dtb.
func (b *board) boot(kernel, initrd, dtb string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	sock := filepath.Join(b.dir, "agent.sock")
	_ = os.Remove(sock)
	console, err := os.OpenFile(filepath.Join(b.dir, "console.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := append([]string{"-n", "19", "qemu-system-aarch64"}, b.qemuArgs("virt", kernel, initrd)...)
	args = append(args, "-dtb", dtb)
	cmd := exec.Command("nice", args...)
	cmd.Stdout, cmd.Stderr = console, console
	if err := cmd.Start(); err != nil {
		console.Close()
		return fmt.Errorf("field: %s: qemu: %w", b.name, err)
	}
	b.cmd, b.exited, b.started = cmd, make(chan struct{}), time.Now()
	go func(done chan struct{}) { _ = cmd.Wait(); console.Close(); close(done) }(b.exited)
	b.closeConn()
	return nil
}

// kill cuts the board's power: SIGKILL to qemu, the card as it was written.
func (b *board) kill() {
	b.mu.Lock()
	cmd, exited := b.cmd, b.exited
	b.closeConn()
	b.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
	}
}

func (b *board) closeConn() {
	if b.conn != nil {
		b.conn.Close()
		b.conn, b.rd = nil, nil
	}
}

// run runs a shell command on the board through the agent; rc is its exit
// status. Bounded by ctx.
func (b *board) run(ctx context.Context, command string) (string, int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(2 * time.Minute)
	}
	if b.conn == nil {
		c, err := net.DialTimeout("unix", filepath.Join(b.dir, "agent.sock"), time.Until(deadline))
		if err != nil {
			return "", -1, err
		}
		b.conn, b.rd = c, bufio.NewReader(c)
	}
	b.seq++
	id := strconv.Itoa(b.seq)
	_ = b.conn.SetDeadline(deadline)
	if _, err := fmt.Fprintf(b.conn, "%s %s\n", id, strings.ReplaceAll(command, "\n", " ")); err != nil {
		b.closeConn()
		return "", -1, err
	}
	for {
		line, err := b.rd.ReadString('\n')
		if err != nil {
			b.closeConn()
			return "", -1, err
		}
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "EWSAGENT" || f[1] != id {
			continue // an answer to a request given up on
		}
		rc, _ := strconv.Atoi(f[2])
		var out []byte
		if len(f) > 3 {
			out, _ = base64.StdEncoding.DecodeString(f[3])
		}
		return string(out), rc, nil
	}
}

// sh runs command with a per-call bound of d.
func (b *board) sh(ctx context.Context, d time.Duration, command string) (string, int, error) {
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return b.run(c, command)
}

// waitAgent polls the agent until it answers or ctx ends.
func (b *board) waitAgent(ctx context.Context) error {
	for {
		if _, rc, err := b.sh(ctx, 5*time.Second, "true"); err == nil && rc == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("field: %s: the agent did not answer: %w", b.name, ctx.Err())
		case <-b.exited:
			return fmt.Errorf("field: %s: qemu exited", b.name)
		case <-time.After(time.Second):
		}
	}
}
