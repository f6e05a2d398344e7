// Package bench is the HTTP load generator behind `ews bench`: open-loop Poisson arrivals (or closed-loop clients, --closed), per-class latency report.
//
// The generator sends requests at the intended times of a seeded Poisson arrival stream, each in
// its own goroutine, whatever the server does: a slow server cannot slow the sender down and so
// cannot hide its latency (no coordinated omission). Latency is measured from the intended send
// time to the end of the response body. When more than --concurrency requests are in flight, new
// arrivals are not sent and are counted as client-side overflow instead of silently slowing down.
//
// # Closed loop
//
// --closed N replaces the arrival stream with N clients: each sends a request, waits for its
// answer, thinks an exponential time of mean --think, and sends again (the shape of WebBench and
// of httperf's sessions, which the papers measured with). Latency then runs from the actual send;
// the offered load is what the server lets through, so a slow server slows its clients.
//
// # Mix
//
// --mix is a comma-separated list of classes, each NAME=WEIGHT:METHOD PATH, for example
// "control=0.25:POST /api/devices/temp1/read,browse=0.75:GET /". Weights are positive numbers and
// are normalised by their sum. PATH starts with "/" and is joined to --url. A class sends no
// body unless --body CLASS=TEXT or --body CLASS=@FILE gives one (Content-Type application/json
// when it is valid JSON, unless --header sets it); the bytes are shared by all its requests.
//
// # JSON report (--json FILE)
//
// The field names below are stable; new fields may be added, none renamed. Rates are per second,
// latencies in milliseconds (float), counts are integers.
//
//	url, mix, seed                 the run's inputs
//	rate_asked                     --rate
//	rate_offered                   arrivals of the stream that were due in the run, per second of run
//	rate_achieved                  requests actually sent per second of run
//	duration_asked_s, elapsed_s    --duration and the length of the sending window
//	max                            --max (0: none)
//	concurrency                    --concurrency (the in-flight cap)
//	interrupted                    true when the run was cut short (Ctrl-C): the report is partial
//	sustained                      false when the asked rate could not be kept (see note)
//	note                           a human sentence saying why the rate was not sustained, or ""
//	lag_max_ms                     the worst delay between an intended and the actual send time
//	closed, think_s                --closed N clients and their mean --think (closed loop; absent: open loop)
//	classes[]                      one object per class, in --mix order, then
//	total                          the same object for all classes together (name "total")
//	control                        the same for every control class together (path under /api/ or
//	                               /cgi-bin/), when the mix has more than one (with their trace
//	                               together); absent otherwise
//
// Each class object:
//
//	name, method, path, weight     from --mix (weight normalised)
//	due                            arrivals due in the run = sent + overflow + unsent
//	sent                           requests sent = ok + shed + errors
//	ok                             2xx and 3xx answers (redirects are not followed)
//	shed                           503 answers
//	errors                         other statuses and transport errors (timeouts, resets, aborts)
//	denied                         of errors, the 401 and 403 answers (missing or wrong credentials)
//	overflow                       arrivals not sent because --concurrency requests were in flight
//	unsent                         arrivals due before the end that the sender was too late to send
//	ok_per_s                       ok / elapsed_s
//	latency_ms                     {p50, p90, p99, max, mean} of ok answers
//	shed_latency_ms                {p50, p90, p99, max, mean} of 503 answers
//	error_samples                  up to 3 distinct error messages
//	trace                          --trace only (absent otherwise): {traced, joined, cached, shared,
//	                               tail_n, sent_ms {p50..mean: from the actual send}, stages[]}, each stage {name, n, ms {p50..mean},
//	                               tail_mean_ms}; stages to_entry, queue, forward, device_wait,
//	                               device, shared, answer, device_queue, slot_wait (trace.go says
//	                               which marks bound each)
package bench
