// Package sched owns request classification, the master's priority queue and the dispatch policies.
package sched
