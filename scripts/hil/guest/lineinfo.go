//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

// lineInfo is struct gpio_v2_line_info (include/uapi/linux/gpio.h).
type lineInfo struct {
	Name     [32]byte
	Consumer [32]byte
	Offset   uint32
	NumAttrs uint32
	Flags    uint64
	Attrs    [10][16]byte
	Padding  [4]uint32
}

// chipInfo is struct gpiochip_info.
type chipInfo struct {
	Name  [32]byte
	Label [32]byte
	Lines uint32
}

const (
	getChipInfo = 0x8044b401 // _IOR(0xB4, 0x01, struct gpiochip_info)
	getLineInfo = 0xc100b405 // _IOWR(0xB4, 0x05, struct gpio_v2_line_info)

	flagActiveLow    = 1 << 1
	flagInput        = 1 << 2
	flagOutput       = 1 << 3
	flagBiasPullUp   = 1 << 8
	flagBiasPullDown = 1 << 9
	flagBiasDisabled = 1 << 10
)

func ioctl(fd uintptr, req uintptr, p unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(p)); e != 0 {
		return e
	}
	return nil
}

func cstr(b []byte) string { return string(bytes.TrimRight(b, "\x00")) }

// lineinfoMain prints line NAME as the kernel describes it.
func lineinfoMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: guest lineinfo NAME")
		return 2
	}
	name := args[0]
	chips, _ := filepath.Glob("/dev/gpiochip*")
	for _, c := range chips {
		if s, ok := find(c, name); ok {
			fmt.Println(s)
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "lineinfo: no line %q on %v\n", name, chips)
	return 1
}

// find looks for the line called name on chip; it describes it when found.
func find(chip, name string) (string, bool) {
	f, err := os.Open(chip)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lineinfo: %v\n", err)
		return "", false
	}
	defer f.Close()
	var ci chipInfo
	if err := ioctl(f.Fd(), getChipInfo, unsafe.Pointer(&ci)); err != nil {
		fmt.Fprintf(os.Stderr, "lineinfo: %s: chip info: %v\n", chip, err)
		return "", false
	}
	for off := uint32(0); off < ci.Lines; off++ {
		li := lineInfo{Offset: off}
		if err := ioctl(f.Fd(), getLineInfo, unsafe.Pointer(&li)); err != nil {
			fmt.Fprintf(os.Stderr, "lineinfo: %s line %d: %v\n", chip, off, err)
			return "", false
		}
		if cstr(li.Name[:]) == name {
			return describe(filepath.Base(chip), &li), true
		}
	}
	return "", false
}

func describe(chip string, li *lineInfo) string {
	dir := "?"
	switch {
	case li.Flags&flagInput != 0:
		dir = "in"
	case li.Flags&flagOutput != 0:
		dir = "out"
	}
	bias := "as-is"
	switch {
	case li.Flags&flagBiasPullUp != 0:
		bias = "pull-up"
	case li.Flags&flagBiasPullDown != 0:
		bias = "pull-down"
	case li.Flags&flagBiasDisabled != 0:
		bias = "disabled"
	}
	low := 0
	if li.Flags&flagActiveLow != 0 {
		low = 1
	}
	return fmt.Sprintf("%s chip=%s offset=%d dir=%s bias=%s active_low=%d consumer=%s",
		cstr(li.Name[:]), chip, li.Offset, dir, bias, low, cstr(li.Consumer[:]))
}
