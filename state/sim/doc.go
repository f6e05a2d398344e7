// Package sim runs N boards' elections and the master's dispatcher on one virtual clock over a seeded faulty network.
package sim
