package supervise

// stallHook, when set, is asked before each pass of the watch loop and
// blocks the loop for good when it answers true. Nil in every shipped
// build: only the ewsfault build (stall_fault.go) sets it, to time 002's
// stalled-watcher half on a real ews under systemd (cmd/benchpaper).
var stallHook func() bool
