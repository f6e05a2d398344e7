// Package designdoc checks the code against docs/DESIGN.md: citations of its invariants, the routes node/ mounts, and the table of who owns what.
package designdoc
