// Package designdoc holds the test that every design citation in the code resolves to docs/DESIGN.md.
package designdoc
