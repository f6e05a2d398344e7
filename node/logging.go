package node

import "log/slog"

// slogPrinter adapts slog to the Println-style loggers of libraries.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Warn("metrics", "msg", v) }
