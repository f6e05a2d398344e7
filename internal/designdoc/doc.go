// Package designdoc checks the code against docs/DESIGN.md: citations of its invariants, and the routes node/ mounts.
package designdoc
