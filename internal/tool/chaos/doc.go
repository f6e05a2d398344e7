// Package chaos is the chaos harness's pure part: fault schedules, the client's and boards' logs, and the checker of their invariants.
package chaos
