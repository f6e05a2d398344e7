// Package e2e holds the process-level tests: they build the ews binary once and run real boards.
package e2e

// The helpers every test here shares, one file each; a test file adds only
// what is its own (its devices, its requests), never a copy of these:
//
//	binary_test.go  building ews once per flavour per run: binary(build{...}) for
//	                extra tags, a version stamp (versionBinary), a cross-build
//	                (goarch, goarm) or a stripped one; ewsBinary is the shipped one
//	setup_test.go   a test's first line: beside (t.Parallel, skipped under
//	                -short) or long (serial, skipped under -short); and
//	                boardTOML.startCluster, n boards configured and started
//	ports_test.go   free loopback ports (freeBase: random blocks, checked) and a
//	                layout of n boards on them; never pick ports another way
//	config_test.go  writing the boards' configs (boardTOML, which also sets each
//	                board's cluster key), writeFile, demo boards
//	board_test.go   one `ews run` process (board): start, startWith a wrapper
//	                (qemu, ip netns exec) and more flags (b.flags), kill9, stop
//	                (SIGTERM, exit 0), waitReady, exitCode, its log (testutil.Buffer)
//	                and waitLog
//	lastlanded_test.go  lastLandedBinary: ews built from the last landed commit
//	                (lastLanded, moved forward at each landing) out of git
//	                history, cached under the user's cache dir; for upgrade tests
//	ask_test.go     asking boards: /api/cluster (view, clusterView, self),
//	                agreement (waitAgree, masterOf when any master will do),
//	                /metrics, requests with a token (do), answered
//	netns_test.go   needNetns (skip unless network namespaces may be made), ipCmd,
//	                netCluster (boards each in a namespace of their own, started
//	                there) and netIsolate (cut one off, both ways, and heal)
//	tlscluster_test.go  a TLS cluster flashed as the README flashes one
//	                (mintCluster: admin bundle, board bundles, CA, a client
//	                trusting it; configure, tokenDoc, start, waitFormed over
//	                HTTPS, or plain HTTP with TLS off; thief: a client holding a
//	                board's card)
//
// A test that only waits on its own boards calls beside (t.Parallel) and runs beside
// the others (go test -parallel; freeBase never hands two running tests the
// same ports); one that needs the host's network, measures a time or a load,
// or runs qemu stays serial, and the serial ones run first, alone. A root
// test in network namespaces of its own (names carrying the pid and a
// sequence number) that checks no time may run beside the others.
//
// The browser tests (-tags browser) add a tab helper in browser_e2e_test.go and use
// internal/testkit/testbrowser for chromium and its console.
