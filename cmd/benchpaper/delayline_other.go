//go:build !linux

package main

import "errors"

// delayLine needs Linux's TUN devices.
func delayLine([]string) error { return errors.New("paper: the delay line needs Linux") }
