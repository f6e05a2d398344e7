package node

import "runtime/debug"

// releaseStartGarbage collects what starting left behind (the config's parse, certificates, the
// UI's index, each component's setup) and returns the free pages to the OS, once, when the node
// serves: a board idles for hours, the heap may not reach its next GC for as long, and the
// runtime's forced GC comes only every two minutes (docs/notes/lighter-boards.md: idle RSS). In the
// background, so the first requests do not wait for it.
func releaseStartGarbage() { go debug.FreeOSMemory() }
