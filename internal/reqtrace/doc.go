// Package reqtrace records when one request passes each hand-off on its way through the cluster (issue 49), for a client that asks.
package reqtrace
